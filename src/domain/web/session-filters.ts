import { validationError } from '../../shared/errors.ts'
import { EVENT_SQL_OPERATORS } from '../properties/property-operators.ts'
import type { PropertyFilter } from '../properties/property-filter.ts'
import { readNode, readText } from '../query/query-fields.ts'
import { col, lit, type Expr } from '../query/query-plan.ts'
import { SESSION_FIELDS } from './sessions-plan.ts'

const BOUNCE_AS_TEXT: Expr = { op: 'case', when: [[{ op: 'binary', fn: '=', left: col('is_bounce'), right: lit(1) }, lit('true')], [{ op: 'binary', fn: '=', left: col('is_bounce'), right: lit(0) }, lit('false')]], else: lit(null) }
/**
 * PostHog's session properties (`type: 'session'` filters, sessions_v2.py's fields) as
 * `sessionsPlan`'s columns: what the web page filters by when a row of a session breakdown is
 * clicked (`$entry_pathname`, `$channel_type`...).
 */
const SESSION_PROPERTIES: ReadonlyMap<string, Expr> = new Map(
  [...SESSION_FIELDS]
    // Times are HogQL's (`sessions.$start_timestamp`); a property filter compares values.
    .filter(([name]) => name.startsWith('$') && !name.endsWith('_timestamp'))
    // A boolean in PostHog: its filters compare with true/false.
    .map(([name, column]): [string, Expr] => [name, name === '$is_bounce' ? BOUNCE_AS_TEXT : col(column)]),
)

const isSessionFilter = (p: unknown): boolean => typeof p === 'object' && p !== null && !Array.isArray(p) && (p as { type?: unknown }).type === 'session'

/** The query's filters split: session filters apart from the others (event, person, cohort...), a flat list as the web page sends. */
export function splitSessionFilters(properties: unknown): { others: unknown; session: unknown[] } {
  if (!Array.isArray(properties)) return { others: properties, session: [] }
  return { others: properties.filter((p) => !isSessionFilter(p)), session: properties.filter(isSessionFilter) }
}

/** Session filters as one condition on `sessionsPlan`'s columns (AND). */
export function sessionFilterExpr(filters: readonly unknown[], attr: string): { expr: Expr | undefined } {
  const parts: Expr[] = []
  filters.forEach((f, i) => {
    const node = readNode(f, `${attr}.${i}`)
    const key = readText(node.key, `${attr}.${i}.key`)!
    const arg = SESSION_PROPERTIES.get(key)
    if (!arg) throw validationError(`${attr}.${i}.key`, `"${key}" is not a session property Tally knows (${[...SESSION_PROPERTIES.keys()].join(', ')}).`, 'invalid_input')
    const operator = node.operator ?? 'exact'
    if (typeof operator !== 'string' || !(EVENT_SQL_OPERATORS as readonly string[]).includes(operator)) {
      throw validationError(`${attr}.${i}.operator`, `"${String(operator)}" is not a supported operator.`, 'invalid_choice')
    }
    const filter: PropertyFilter = { key, type: 'event', operator, value: node.value }
    parts.push({ op: 'value_filter', arg, filter })
  })
  return { expr: parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : { op: 'and', args: parts } }
}
