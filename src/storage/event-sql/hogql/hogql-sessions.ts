import { hogqlError } from '../../../domain/hogql/hogql-error.ts'
import { SESSION_FIELDS, sessionsPlan } from '../../../domain/web/sessions-plan.ts'
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

/** The project's sessions (every session id of its events) with these columns, as a SELECT. */
function sessionsSql(columns: ReadonlySet<string>, c: TableContext): string {
  return compileSubPlan(sessionsPlan(undefined, columns), c.projectId, c.dialect.events, c.params)
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
  relation: (ref, c) => `(${sessionsSql(ref.sessionColumns, c)}) AS ${ref.sqlAlias}`,
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
