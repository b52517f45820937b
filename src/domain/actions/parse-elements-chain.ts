import { RE2JS } from 're2js'
import type { Element } from '../events/elements-to-string.ts'

// PostHog's `chain_to_elements` (posthog/models/element/element.py), with its three regexes run by
// RE2 here and by DuckDB's RE2 in `storage/duckdb/duckdb-action-*`: the same pattern text on both
// sides, so the pure matcher and the SQL split a chain identically. RE2 is linear in the chain,
// which the sender controls (the quoted-string alternation is exponential in a backtracking engine).
// Two deliberate differences from Python: `(?s)` lets `.` cross a newline (Python's `.` stops there and
// loses the rest of the element), and `\"` in keys and values is unescaped, so parsing is the inverse
// of `elementsToString` for every value that does not end in a backslash.

/** One element per match: runs of non-space, non-`;` characters and double-quoted strings. */
export const SPLIT_CHAIN_PATTERN = '(?s)(?:[^\\s;"]|"(?:\\\\.|[^"])*")+'
/** Group 1: `tag.class1.class2`; group 2: the `key="value"...` run after the first `:key=`. */
export const SPLIT_CLASS_PATTERN = '(?s)^(.*?)(?:$|:([a-zA-Z\\-_0-9]*=.*))'
/** Group 1: key; group 2: value (shortest run not ending in a backslash, up to a quote). */
export const ATTRIBUTE_PATTERN = '(?s)(.*?)="(.*?[^\\\\])"'
/** `nth-child` / `nth-of-type` values that are read as numbers (Python `int()`); others are dropped. */
export const POSITION_PATTERN = '^[+-]?[0-9]{1,15}$'

const splitChain = RE2JS.compile(SPLIT_CHAIN_PATTERN)
const splitClass = RE2JS.compile(SPLIT_CLASS_PATTERN)
const attribute = RE2JS.compile(ATTRIBUTE_PATTERN)
const position = /^[+-]?[0-9]{1,15}$/

/** An element as parsed from a chain: `attr_class` is always a list, possibly empty. */
export interface ParsedElement extends Element {
  attr_class: string[]
  attributes: Record<string, string>
}

/** `\"` back to `"`, undoing `elementsToString`'s escaping. */
export function unescapeChainValue(text: string): string {
  return text.includes('\\"') ? text.replace(/\\"/g, '"') : text
}

/**
 * Parses PostHog's `elements_chain` string into its elements, innermost (clicked) first:
 * `tag_name` (absent when the tag part is empty), `attr_class` (non-empty classes), and from the
 * `key="value"` pairs `href`, `text`, `attr_id`, `nth_child`, `nth_of_type` (numbers), every other
 * non-empty key into `attributes`. A key given twice keeps its last value, as in Python.
 */
export function parseElementsChain(chain: string): ParsedElement[] {
  const out: ParsedElement[] = []
  if (!chain) return out
  const elements = splitChain.matcher(chain)
  while (elements.find()) out.push(parseElement(elements.group() ?? ''))
  return out
}

function parseElement(source: string): ParsedElement {
  const parts = splitClass.matcher(source)
  parts.find()
  const tagPart = parts.group(1) ?? ''
  const attrPart = parts.group(2) ?? ''
  const element: ParsedElement = { attr_class: [], attributes: {} }
  if (tagPart) {
    const dot = tagPart.indexOf('.')
    element.tag_name = dot < 0 ? tagPart : tagPart.slice(0, dot)
    if (dot >= 0) element.attr_class = tagPart.slice(dot + 1).split('.').filter((c) => c !== '')
  }
  const pairs = attribute.matcher(attrPart)
  while (pairs.find()) setAttribute(element, unescapeChainValue(pairs.group(1) ?? ''), unescapeChainValue(pairs.group(2) ?? ''))
  return element
}

function setAttribute(element: ParsedElement, key: string, value: string): void {
  switch (key) {
    case 'href':
      element.href = value
      return
    case 'text':
      element.text = value
      return
    case 'attr_id':
      element.attr_id = value
      return
    case 'nth-child':
      element.nth_child = toPosition(value)
      return
    case 'nth-of-type':
      element.nth_of_type = toPosition(value)
      return
    default:
      if (key) element.attributes[key] = value
  }
}

function toPosition(value: string): number | undefined {
  if (!position.test(value)) return undefined
  const n = Number(value)
  return n === 0 ? 0 : n // `-0` reads as 0
}
