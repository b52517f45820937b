import type { SelectorPart, SelectorRequirements } from '../../domain/actions/match-selector.ts'
import type { ElementRef, EventDialect } from './event-dialect.ts'
import type { SqlParams } from './sql-params.ts'

/** One compound selector's requirements as a condition over one parsed element. */
export function requirementsSql(req: SelectorRequirements, el: ElementRef, d: EventDialect, params: SqlParams): string {
  const all: string[] = []
  if (req.tag_name !== undefined) all.push(`${el.field('tag')} = ${params.add(req.tag_name)}`)
  if (req.href !== undefined) all.push(`${el.field('href')} = ${params.add(req.href)}`)
  if (req.attr_id !== undefined) all.push(`${el.field('attr_id')} = ${params.add(req.attr_id)}`)
  for (const cls of req.attr_class ?? []) all.push(el.hasClass(params.add(cls)))
  if (req.nth_child !== undefined) all.push(`${el.field('nth_child')} = ${params.add(String(req.nth_child))}`)
  if (req.nth_of_type !== undefined) all.push(`${el.field('nth_of_type')} = ${params.add(String(req.nth_of_type))}`)
  for (const [name, value] of Object.entries(req.attributes ?? {})) {
    all.push(`${el.attribute(params.add(`attr__${name}`))} = ${params.add(value)}`)
  }
  return all.length === 0 ? d.bool(true) : `COALESCE(${all.join(' AND ')}, ${d.bool(false)})`
}

/**
 * A selector as SQL, with the structural semantics of the domain's `matchSelector`: each element
 * becomes a token of one bit per part (does it satisfy that part?), innermost element first,
 * joined with `,`; the selector becomes an RE2 pattern over those tokens in which a child part sits
 * in the next token and a descendant part in any later one. The pattern holds only digits and
 * punctuation of ours; it is bound anyway.
 */
export function selectorSql(parts: readonly SelectorPart[], d: EventDialect, params: SqlParams): string {
  if (parts.length === 0) return d.bool(true)
  const n = parts.length
  const inner = [...parts].reverse()
  const token = (k: number): string => `[01]{${k}}1[01]{${n - k - 1}}`
  let pattern = `(?:^|,)${token(0)}`
  for (let k = 1; k < n; k++) pattern += (inner[k - 1].directDescendant ? ',' : ',(?:[01]*,)*') + token(k)
  pattern += '(?:,|$)'
  const tokens = d.elements.tokens((el) => inner.map((part) => `CASE WHEN ${requirementsSql(part.requirements, el, d, params)} THEN '1' ELSE '0' END`))
  return d.regexMatch(tokens, params.add(pattern))
}
