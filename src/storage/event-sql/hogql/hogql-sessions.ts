import type { HogQLExpr } from '../../../domain/hogql/hogql-ast.ts'
import { hogqlError } from '../../../domain/hogql/hogql-error.ts'
import { SESSION_FIELDS, SESSION_SPAN_MS, sessionsPlan } from '../../../domain/web/sessions-plan.ts'
import { compileSubPlan } from '../compile-plan.ts'
import type { HType, Typed } from './hogql-sql-types.ts'
import type { HogQLTable, TableContext, TableRef } from './hogql-tables.ts'

/**
 * HogQL's `sessions` table and `events.session.*`, as PostHog's lazy sessions table (sessions_v2.py)
 * has them, over the sessions the web queries read: `sessionsPlan` of the whole project (one
 * definition of a session for both), compiled with the engine's event dialect into the HogQL
 * statement, with only the columns the query reads.
 */

const TIMES = new Set(['start_timestamp', 'end_timestamp'])
const NUMBERS = new Set(['session_duration', 'pageview_count', 'autocapture_count', 'screen_count'])
const typeOf = (column: string): HType => (TIMES.has(column) ? 'datetime' : NUMBERS.has(column) ? 'number' : column === 'is_bounce' ? 'bool' : 'string')

const FIELD_TYPES: Record<string, HType> = Object.fromEntries([...SESSION_FIELDS].map(([name, column]) => [name, typeOf(column)]))

/** A session column as HogQL reads it: `is_bounce` (1, 0, or NULL without page views) as a truth value. */
function sessionValue(sql: string, column: string): Typed {
  const type = typeOf(column)
  return column === 'is_bounce' ? { sql: `(${sql} = 1)`, type } : { sql, type }
}

function sessionColumn(chain: readonly string[], table: string): string {
  const [name, ...rest] = chain
  const column = name === undefined ? undefined : SESSION_FIELDS.get(name)
  if (!column) throw hogqlError(`Unknown field "${chain.join('.')}" on ${table}: fields are ${[...SESSION_FIELDS.keys()].join(', ')}.`)
  if (rest.length > 0) throw hogqlError(`Field "${name}" of ${table} has no "${rest.join('.')}".`)
  return column
}

/** The project's sessions (every session id of its events, or those `start` allows) with these columns, as a SELECT. */
function sessionsSql(columns: ReadonlySet<string>, c: TableContext, start?: { from?: Date; to?: Date }): string {
  return compileSubPlan(sessionsPlan(start, columns), c.projectId, c.dialect.events, c.params)
}

/** A constant time of a bound: a date or date-time text, as is or in toDateTime/toDate (taken as UTC; the margin covers any zone). */
function constantTime(e: HogQLExpr): number | null {
  const text = e.kind === 'constant' ? e.value
    : e.kind === 'call' && ['toDateTime', 'toDate'].includes(e.name) && e.args.length === 1 && e.args[0]!.kind === 'constant' ? e.args[0]!.value
    : null
  if (typeof text !== 'string' || !/^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/.test(text)) return null
  const ms = Date.parse(`${text.length === 10 ? text : text.replace(' ', 'T')}${text.length === 10 ? '' : 'Z'}`)
  return Number.isFinite(ms) ? ms : null
}

/** Widening of a `$start_timestamp` bound into one on the partials: a session's partials start within a day after it, and a day for the zone. */
const MARGIN_MS = SESSION_SPAN_MS + 86_400_000

/**
 * The `$start_timestamp` bounds among the WHERE's top-level AND terms (`$start_timestamp >= '…'`,
 * `< toDateTime('…')`, either side), widened into bounds on the partials' start. A session starting in
 * the bounds has every partial in the widened ones; a session starting before the lower bound less a
 * day has none past the bound, so it cannot pass the WHERE however few of its partials are read. The
 * WHERE still decides.
 */
function startBounds(where: HogQLExpr | null, ref: TableRef, only: boolean): { from?: Date; to?: Date } | undefined {
  const isStart = (e: HogQLExpr) =>
    e.kind === 'field' && ((only && e.chain.length === 1 && e.chain[0] === '$start_timestamp') || (e.chain.length === 2 && e.chain[0] === ref.name && e.chain[1] === '$start_timestamp'))
  const flip: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' }
  let from = -Infinity
  let to = Infinity
  for (const term of where?.kind === 'and' ? where.args : where ? [where] : []) {
    if (term.kind !== 'compare' || !flip[term.op]) continue
    const [op, at] = isStart(term.left) ? [term.op, constantTime(term.right)] : isStart(term.right) ? [flip[term.op]!, constantTime(term.left)] : [null, null]
    if (op === null || at === null) continue
    if (op === '>' || op === '>=') from = Math.max(from, at - MARGIN_MS)
    else to = Math.min(to, at + MARGIN_MS)
  }
  if (from === -Infinity && to === Infinity) return undefined
  return { ...(from > -Infinity ? { from: new Date(from) } : {}), ...(to < Infinity ? { to: new Date(to) } : {}) }
}

/** `SELECT * FROM sessions`: PostHog's fields without its aliases (`id`, `duration`, `$exit_*`). */
const STAR = [...SESSION_FIELDS.keys()].filter((n) => n !== 'id' && n !== 'duration' && !n.startsWith('$exit_'))

export const SESSIONS: HogQLTable = {
  star: STAR,
  fields: FIELD_TYPES,
  owns: (name) => SESSION_FIELDS.has(name),
  field(ref, chain, c) {
    const column = sessionColumn(chain, 'sessions')
    ref.sessionColumns.add(column)
    return sessionValue(`${ref.sqlAlias}.${c.dialect.quote(column)}`, column)
  },
  relation: (ref, c) => `(${sessionsSql(ref.sessionColumns, c, ref.sessionStart)}) AS ${ref.sqlAlias}`,
  // `$start_timestamp` pushed into the partials' scan (ClickHouse's table is sorted by their start).
  narrow(ref, where, only) {
    ref.sessionStart = startBounds(where, ref, only)
  },
}

const joined = (column: string) => `__session_${column}`

/** `events.session.<field>`: a column of the event's session (joined on its `$session_id`). */
export function sessionOfEvent(ref: TableRef, chain: readonly string[], c: TableContext): Typed {
  const column = sessionColumn(chain.slice(1), 'session')
  ref.sessionColumns.add(column)
  return sessionValue(`${ref.sqlAlias}.${c.dialect.quote(joined(column))}`, column)
}

/**
 * The events relation (written by `events` under the alias given) with the session columns its
 * fields read, by a LEFT JOIN on `$session_id`: NULL for an event without a session id.
 */
export function withSessions(events: (alias: string) => string, ref: TableRef, c: TableContext): string {
  if (ref.sessionColumns.size === 0) return events(ref.sqlAlias)
  const q = (name: string) => c.dialect.quote(name)
  const columns = [...ref.sessionColumns]
  // '' for an event without a session id: no session has it (ClickHouse 18.16 joins on non-Nullable keys).
  const key = `coalesce(${c.dialect.property('ev', 'properties', ['$session_id'], c.params)}, '')`
  const keyed = `(SELECT ev.*, ${key} AS __session_key FROM ${events('ev')}) AS ek`
  const picked = columns.map((x) => `${q(x)} AS ${q(joined(x))}`).join(', ')
  const sessions = `(SELECT coalesce(session_id, '') AS __session_id, ${picked} FROM (${sessionsSql(ref.sessionColumns, c)}) AS s) AS se`
  const sessionCols = columns.map((x) => `se.${q(joined(x))}`).join(', ')
  return `(SELECT ek.*, ${sessionCols} FROM ${keyed} ${c.dialect.join('left', sessions, 'ek.__session_key = se.__session_id')}) AS ${ref.sqlAlias}`
}
