// Reading an `elements_chain` back into elements, as PostHog's `chain_to_element_dicts`
// (posthog/models/element/element.py) does: the one parser of the events API and the web app.

/** One element as PostHog's events API serializes it (`ElementSerializer`), innermost first. */
export interface ElementJson {
  text: string | null
  tag_name: string | null
  attr_class: string[] | null
  href: string | null
  attr_id: string | null
  nth_child: number | null
  nth_of_type: number | null
  attributes: Record<string, string>
  order: number
}

// Elements are separated by `;` outside double quotes; a quoted run may hold `;`, spaces and
// backslash escapes (`\"`). Each branch starts on a distinct character, so the split is linear.
const SPLIT_CHAIN = /(?:[^\s;"]|"(?:[^"\\]|\\[^\n]|\\(?=\n))*\\?")+/g
// The tag and classes end at the first `:` followed by `key=` (a class may hold `:`).
const SPLIT_CLASS_ATTRIBUTES = /(.*?)($|:([a-zA-Z\-_0-9]*=.*))/
// One attribute value, from just after `="`: the shortest run not ending in a backslash, up to `"`.
const ATTRIBUTE_VALUE = /(.*?[^\\])"/y

/** PostHog parses at most this much of a chain; a longer one loses its outermost ancestors. */
export const MAX_ELEMENTS_CHAIN_LENGTH = 16_384

function splitChain(chain: string): string[] {
  let source = chain
  if (chain.length > MAX_ELEMENTS_CHAIN_LENGTH) {
    source = chain.slice(0, MAX_ELEMENTS_CHAIN_LENGTH)
    const separator = source.lastIndexOf(';')
    if (separator > MAX_ELEMENTS_CHAIN_LENGTH / 2) source = source.slice(0, separator)
  }
  return source.match(SPLIT_CHAIN) ?? []
}

/** Each `key="value"` pair of an element's attribute run, left to right (a scan: linear in the run). */
function* attributePairs(source: string): Generator<[string, string]> {
  let keyStart = 0
  let search = 0
  for (;;) {
    const equals = source.indexOf('="', search)
    if (equals < 0) return
    ATTRIBUTE_VALUE.lastIndex = equals + 2
    const value = ATTRIBUTE_VALUE.exec(source)
    if (value === null) {
      search = equals + 2
      continue
    }
    yield [source.slice(keyStart, equals), value[1]]
    keyStart = search = ATTRIBUTE_VALUE.lastIndex
  }
}

function integerOrNull(value: string): number | null {
  return /^\s*[-+]?\d+\s*$/.test(value) ? Number.parseInt(value, 10) : null
}

/**
 * The elements of an `elements_chain` (`tag.class1.class2:attr__x="v"nth-child="1";...`), innermost
 * first, as PostHog reads them: `;` and `:` inside quoted values do not split, values keep their
 * escapes, `text`, `href`, `attr_id`, `nth-child` and `nth-of-type` become their fields and every
 * other key goes into `attributes`. An `nth-*` that is not an integer reads as null (PostHog raises).
 */
export function parseElementsChain(chain: string): ElementJson[] {
  return splitChain(chain).map((part, order) => {
    const split = SPLIT_CLASS_ATTRIBUTES.exec(part)
    const tagPart = split?.[1] ?? ''
    const attrs = split?.[3]
    const element: ElementJson = {
      text: null, tag_name: null, attr_class: null, href: null, attr_id: null, nth_child: null, nth_of_type: null, attributes: {}, order,
    }
    if (tagPart) {
      const dot = tagPart.indexOf('.')
      element.tag_name = dot < 0 ? tagPart : tagPart.slice(0, dot)
      if (dot >= 0) element.attr_class = tagPart.slice(dot + 1).split('.').filter((c) => c !== '')
    }
    if (attrs) {
      for (const [key, value] of attributePairs(attrs)) {
        if (key === 'href') element.href = value
        else if (key === 'nth-child') element.nth_child = integerOrNull(value)
        else if (key === 'nth-of-type') element.nth_of_type = integerOrNull(value)
        else if (key === 'text') element.text = value
        else if (key === 'attr_id') element.attr_id = value
        else if (key) element.attributes[key] = value
      }
    }
    return element
  })
}
