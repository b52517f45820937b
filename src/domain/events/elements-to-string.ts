// Autocapture elements, as PostHog's ingestion stores them (`nodejs/src/utils/db/elements-chain.ts`:
// `extractElements`, `elementsToString`; `create-event.ts`: `getElementsChain`).

/** One DOM element of an autocapture event, innermost (the clicked one) first. */
export interface Element {
  text?: string
  tag_name?: string
  href?: string
  attr_class?: string[]
  attr_id?: string
  nth_child?: number | string
  nth_of_type?: number | string
  attributes?: Record<string, unknown>
}

/** Node sorts attribute keys with `localeCompare` (ICU root order), not by code point as Python did. */
const collator = new Intl.Collator('en-US')

function escapeQuotes(input: string): string {
  return input.includes('"') ? input.replace(/"/g, '\\"') : input
}

/**
 * The `elements_chain` string: elements joined by `;`, each `tag.class1.class2:` (classes sorted,
 * `"` dropped) followed by `key="value"` pairs sorted by key with `"` escaped. The pairs are
 * `text` (when non-empty), `nth-child` and `nth-of-type` (default 0), `href`, `attr_id`, then every
 * raw `attr__*` attribute.
 */
export function elementsToString(elements: readonly Element[]): string {
  const parts: string[] = []
  for (const element of elements) {
    let s = element.tag_name ? String(element.tag_name) : ''
    if (element.attr_class) {
      for (const cls of [...element.attr_class].sort()) s += `.${String(cls).replace(/"/g, '')}`
    }
    const attributes: Record<string, unknown> = {
      ...(element.text ? { text: element.text } : {}),
      'nth-child': element.nth_child ?? 0,
      'nth-of-type': element.nth_of_type ?? 0,
      ...(element.href ? { href: element.href } : {}),
      ...(element.attr_id ? { attr_id: element.attr_id } : {}),
      ...element.attributes,
    }
    s += ':'
    const entries = Object.entries(attributes).sort(([a], [b]) => collator.compare(a, b))
    for (const [key, value] of entries) s += `${escapeQuotes(key)}="${escapeQuotes(stringify(value))}"`
    parts.push(s)
  }
  return parts.join(';')
}

/** JS `toString()` of an attribute value, as Node's `value.toString()` gives it (null/undefined spelled out). */
function stringify(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  return String(value)
}

/**
 * The elements posthog-js sent in `properties.$elements`, reshaped: `$el_text` cut to 400 characters,
 * `attr__href` to 2048, `attr__class` split on spaces (or kept as an array), `attr__id` as `attr_id`,
 * and every `attr__*` key kept (prefix included) in `attributes`. Non-object entries are skipped.
 */
export function extractElements(raw: readonly unknown[]): Element[] {
  const out: Element[] = []
  for (const item of raw) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue
    const el = item as Record<string, unknown>
    const attributes: Record<string, unknown> = {}
    for (const key of Object.keys(el)) if (key.startsWith('attr__')) attributes[key] = el[key]
    const element: Element = { attributes }
    if (typeof el.$el_text === 'string') element.text = el.$el_text.slice(0, 400)
    if (el.tag_name !== undefined && el.tag_name !== null) element.tag_name = String(el.tag_name)
    if (typeof el.attr__href === 'string') element.href = el.attr__href.slice(0, 2048)
    const classes = extractAttrClass(el.attr__class)
    if (classes) element.attr_class = classes
    if (el.attr__id !== undefined && el.attr__id !== null) element.attr_id = String(el.attr__id)
    if (isPosition(el.nth_child)) element.nth_child = el.nth_child
    if (isPosition(el.nth_of_type)) element.nth_of_type = el.nth_of_type
    out.push(element)
  }
  return out
}

function isPosition(value: unknown): value is number | string {
  return typeof value === 'number' || typeof value === 'string'
}

function extractAttrClass(value: unknown): string[] | undefined {
  if (!value) return undefined
  if (Array.isArray(value)) return value.map(String)
  return String(value).split(' ')
}

/**
 * Takes the elements out of an event's properties (mutating them): a non-empty `$elements_chain`
 * string wins as is (newer posthog-js sends it pre-serialised), else `$elements` is serialised.
 * Both keys are always removed. Applies to every event, not only `$autocapture`, as PostHog does.
 */
export function takeElementsChain(properties: Record<string, unknown>): string {
  let chain = ''
  const given = properties.$elements_chain
  if (given) {
    chain = typeof given === 'string' ? given : String(given)
  } else if (Array.isArray(properties.$elements) && properties.$elements.length > 0) {
    chain = elementsToString(extractElements(properties.$elements))
  }
  delete properties.$elements_chain
  delete properties.$elements
  return chain
}
