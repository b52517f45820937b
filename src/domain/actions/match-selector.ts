import type { ParsedElement } from './parse-elements-chain.ts'

/** What one compound selector (`a.btn[data-x="1"]:nth-child(2)`) asks of one element. */
export interface SelectorRequirements {
  tag_name?: string
  attr_id?: string
  href?: string
  attr_class?: string[]
  nth_child?: number
  nth_of_type?: number
  /** Attribute name (lower-cased, without `attr__`) -> required value. */
  attributes?: Record<string, string>
}

/** One compound selector; `directDescendant` when it follows a `>` (child of the previous part). */
export interface SelectorPart {
  requirements: SelectorRequirements
  directDescendant: boolean
}

const ATTRIBUTE = /\[\s*([^\]=\s~|^$*]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\]"'\s]*))\s*\]/
const BARE_ATTRIBUTE = /\[[^\]]*\]/
const COLON = /(?<!\\):([A-Za-z-]+)(?:\(([^)]*)\))?/ // `\:` is part of a class (`.md\:flex`)
const ID = /#([^.#[:\s>]+)/
const FINAL_TAG = /^([A-Za-z0-9]+)/

/**
 * Parses PostHog's CSS selector subset as plugin-server's `SelectorPart` does
 * (`plugin-server/src/worker/ingestion/action-matcher.ts`): `> * >` and `> *` removed, split on
 * spaces, `>` marks the next part as a child; per part `[attr="v"]` / `[attr='v']` (`id` -> attr_id,
 * `href` -> href, others compared with the element's `attr__<attr>`), `:nth-child(n)`,
 * `:nth-of-type(n)`, `.class` (backslash escapes removed), and a leading `[A-Za-z0-9]+` tag.
 * Beyond Node: `#id` is read as attr_id (PostHog's HogQL does), `[attr=unquoted]` is accepted, an
 * id is compared as written (Node lower-cases it, so a mixed-case id never matched there), and
 * other pseudo-classes (`:hover`) and bare `[attr]` are ignored instead of being read as part of a
 * class name. A part with no requirement matches any element.
 */
export function parseSelector(selector: string): SelectorPart[] {
  const tokens = selector.replace(/> \* > /g, '').replace(/> \*/g, '').trim().split(' ')
  const parts: SelectorPart[] = []
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]
    if (token === '>' || token === '') continue
    parts.push({ requirements: parseCompound(token), directDescendant: i > 0 && tokens[i - 1] === '>' })
  }
  return parts
}

function parseCompound(input: string): SelectorRequirements {
  const req: SelectorRequirements = {}
  let tag = input
  for (let m = ATTRIBUTE.exec(tag); m; m = ATTRIBUTE.exec(tag)) {
    tag = tag.slice(0, m.index) + tag.slice(m.index + m[0].length)
    const name = m[1].toLowerCase()
    const value = m[2] ?? m[3] ?? m[4] ?? ''
    if (name === 'id') req.attr_id = value
    else if (name === 'href') req.href = value
    else req.attributes = { ...req.attributes, [name]: value }
  }
  for (let m = BARE_ATTRIBUTE.exec(tag); m; m = BARE_ATTRIBUTE.exec(tag)) tag = tag.slice(0, m.index) + tag.slice(m.index + m[0].length)
  for (let m = COLON.exec(tag); m; m = COLON.exec(tag)) {
    tag = tag.slice(0, m.index) + tag.slice(m.index + m[0].length)
    const n = m[2] !== undefined && /^\d+$/.test(m[2]) ? parseInt(m[2], 10) : 0
    if (!n) continue // Node: an argument of 0 or none adds no requirement
    if (m[1] === 'nth-child') req.nth_child = n
    else if (m[1] === 'nth-of-type') req.nth_of_type = n
  }
  for (let m = ID.exec(tag); m; m = ID.exec(tag)) {
    tag = tag.slice(0, m.index) + tag.slice(m.index + m[0].length)
    req.attr_id = m[1]
  }
  if (tag.includes('.')) {
    const classes = tag.split('.')
    req.attr_class = classes.slice(1).map(unescapeClassName)
    tag = classes[0]
  }
  const finalTag = FINAL_TAG.exec(tag)
  if (finalTag) req.tag_name = finalTag[1]
  return req
}

/** Node's `unescapeClassName`: `\\` becomes `\`, any other backslash is dropped. */
function unescapeClassName(name: string): string {
  return name.split('\\\\').map((p) => p.replace(/\\/g, '')).join('\\')
}

/** True when the element satisfies every requirement (Node's `checkElementAgainstSelectorPartRequirements`). */
export function elementMatchesRequirements(element: ParsedElement, req: SelectorRequirements): boolean {
  if (req.tag_name !== undefined && element.tag_name !== req.tag_name) return false
  if (req.href !== undefined && element.href !== req.href) return false
  if (req.attr_id !== undefined && element.attr_id !== req.attr_id) return false
  if (req.attr_class !== undefined && !req.attr_class.every((c) => element.attr_class.includes(c))) return false
  if (req.nth_child !== undefined && element.nth_child !== req.nth_child) return false
  if (req.nth_of_type !== undefined && element.nth_of_type !== req.nth_of_type) return false
  if (req.attributes !== undefined) {
    for (const [name, value] of Object.entries(req.attributes)) {
      if (element.attributes[`attr__${name}`] !== value) return false
    }
  }
  return true
}

/**
 * True when the elements (innermost first) contain a path the selector describes: the parts,
 * outermost first, match elements each inside the previous one, a child part (`>`) the element
 * immediately inside. The innermost part may match any element, not only the clicked one (as in
 * PostHog). This is the exact structural reading; Node's greedy walk with one-step backtracking
 * can miss a match this finds (e.g. when the first `div` it picks has no `> a` child but a later
 * one has). No parts (an empty selector) matches every event, as in Node.
 */
export function matchSelector(parts: readonly SelectorPart[], elements: readonly ParsedElement[]): boolean {
  if (parts.length === 0) return true
  const n = elements.length
  // reach[i]: the parts so far can end on element i (index into `elements`, outermost = n - 1).
  let reach = elements.map((el) => elementMatchesRequirements(el, parts[0].requirements))
  for (let k = 1; k < parts.length; k++) {
    const part = parts[k]
    const next = new Array<boolean>(n).fill(false)
    let anyOuter = false // some j > i with reach[j]
    for (let i = n - 1; i >= 0; i--) {
      const allowed = part.directDescendant ? i + 1 < n && reach[i + 1] : anyOuter
      if (allowed && elementMatchesRequirements(elements[i], part.requirements)) next[i] = true
      if (reach[i]) anyOuter = true
    }
    reach = next
  }
  return reach.some(Boolean)
}
