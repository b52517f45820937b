import type { SelectorPart, SelectorRequirements } from '../../domain/actions/match-selector.ts'
import { ATTRIBUTE_PATTERN, POSITION_PATTERN, SPLIT_CHAIN_PATTERN, SPLIT_CLASS_PATTERN } from '../../domain/actions/parse-elements-chain.ts'

/** Positional parameters (`$1`, `$2`...): user values are always bound, never spliced into SQL. */
export interface SqlParams {
  readonly values: (string | number | boolean)[]
  /** Binds a value and returns its placeholder. */
  add(value: string | number | boolean): string
}

export function createSqlParams(): SqlParams {
  const values: (string | number | boolean)[] = []
  return {
    values,
    add(value) {
      values.push(value)
      return `$${values.length}`
    },
  }
}

/** A constant of ours (never user text) as a SQL string literal. */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`
}

function lookup(key: string): string {
  return `list_reverse(q.vs)[list_position(list_reverse(q.ks), ${literal(key)})]`
}

function position(expr: string): string {
  return `CASE WHEN regexp_matches(${expr}, ${literal(POSITION_PATTERN)}) THEN CAST(CAST(${expr} AS BIGINT) AS VARCHAR) END`
}

const unescape = (name: string): string => `replace(${name}, '\\"', '"')`

/**
 * The `elements_chain` column parsed in SQL into a list of structs, with the same RE2 patterns the
 * domain's `parseElementsChain` runs: `tag`, `classes`, `text`, `href`, `attr_id`, `nth_child` and
 * `nth_of_type` (positions as canonical integer text), and the attribute keys and values (reversed,
 * so `list_position` finds the last value of a key, as the pure parser keeps it). Element conditions
 * below are lambdas over one such struct, named `e`.
 */
export const ELEMENTS_SQL = `list_transform(list_transform(list_transform(
    regexp_extract_all(elements_chain, ${literal(SPLIT_CHAIN_PATTERN)}),
    lambda el: struct_pack(tp := regexp_extract(el, ${literal(SPLIT_CLASS_PATTERN)}, 1),
                           ap := regexp_extract(el, ${literal(SPLIT_CLASS_PATTERN)}, 2))),
    lambda p: struct_pack(tp := p.tp,
      ks := list_transform(regexp_extract_all(p.ap, ${literal(ATTRIBUTE_PATTERN)}, 1), lambda k: ${unescape('k')}),
      vs := list_transform(regexp_extract_all(p.ap, ${literal(ATTRIBUTE_PATTERN)}, 2), lambda v: ${unescape('v')}))),
    lambda q: struct_pack(
      tag := CASE WHEN q.tp = '' THEN NULL ELSE split_part(q.tp, '.', 1) END,
      classes := CASE WHEN position('.' IN q.tp) > 0
        THEN list_filter(string_split(substr(q.tp, position('.' IN q.tp) + 1), '.'), lambda c: c <> '')
        ELSE []::VARCHAR[] END,
      text := ${lookup('text')}, href := ${lookup('href')}, attr_id := ${lookup('attr_id')},
      nth_child := ${position(lookup('nth-child'))}, nth_of_type := ${position(lookup('nth-of-type'))},
      ks := list_reverse(q.ks), vs := list_reverse(q.vs)))`

/** True when some element of `__els` satisfies `condition` (a SQL boolean over `e`). */
export function anyElement(condition: string): string {
  return `(len(list_filter(__els, lambda e: COALESCE(${condition}, FALSE))) > 0)`
}

/** One compound selector's requirements as a condition over the element `e`. */
export function requirementsSql(req: SelectorRequirements, params: SqlParams): string {
  const all: string[] = []
  if (req.tag_name !== undefined) all.push(`e.tag = ${params.add(req.tag_name)}`)
  if (req.href !== undefined) all.push(`e.href = ${params.add(req.href)}`)
  if (req.attr_id !== undefined) all.push(`e.attr_id = ${params.add(req.attr_id)}`)
  for (const cls of req.attr_class ?? []) all.push(`list_contains(e.classes, ${params.add(cls)})`)
  if (req.nth_child !== undefined) all.push(`e.nth_child = ${params.add(String(req.nth_child))}`)
  if (req.nth_of_type !== undefined) all.push(`e.nth_of_type = ${params.add(String(req.nth_of_type))}`)
  for (const [name, value] of Object.entries(req.attributes ?? {})) {
    all.push(`e.vs[list_position(e.ks, ${params.add(`attr__${name}`)})] = ${params.add(value)}`)
  }
  return all.length === 0 ? 'TRUE' : `COALESCE(${all.join(' AND ')}, FALSE)`
}

/**
 * A selector as SQL, with the structural semantics of the domain's `matchSelector`: each element
 * becomes a token of one bit per part (does it satisfy that part?), innermost element first,
 * joined with `,`; the selector becomes an RE2 pattern over those tokens in which a child part sits
 * in the next token and a descendant part in any later one. The pattern holds only digits and
 * punctuation of ours; it is bound anyway.
 */
export function selectorSql(parts: readonly SelectorPart[], params: SqlParams): string {
  if (parts.length === 0) return 'TRUE'
  const n = parts.length
  const inner = [...parts].reverse()
  const bits = inner.map((part) => `CASE WHEN ${requirementsSql(part.requirements, params)} THEN '1' ELSE '0' END`)
  const token = (k: number): string => `[01]{${k}}1[01]{${n - k - 1}}`
  let pattern = `(?:^|,)${token(0)}`
  for (let k = 1; k < n; k++) pattern += (inner[k - 1].directDescendant ? ',' : ',(?:[01]*,)*') + token(k)
  pattern += '(?:,|$)'
  const tokens = `array_to_string(list_transform(__els, lambda e: concat(${bits.join(', ')})), ',')`
  return `regexp_matches(${tokens}, ${params.add(pattern)})`
}
