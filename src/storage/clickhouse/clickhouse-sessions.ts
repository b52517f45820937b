import { END_PROPERTIES, ENTRY_PROPERTIES } from '../../domain/web/session-partials.ts'
import { intLiteral, stringLiteral } from './clickhouse-literals.ts'
import type { ClickHouse } from './open-clickhouse.ts'

/**
 * The sessions aggregate on ClickHouse (migration 0012-sessions.sql; docs/web-analytics.md): the
 * materialized view `sessions_mv` writes one partial per (project, session) of each block inserted
 * into `events`, with `sessionPartialsSql()` as its SELECT (the migration holds the same text, checked
 * by clickhouse-sessions.test.ts); deletions of events rebuild the sessions they touched with it.
 */

const value = (key: string) => `prop_values[indexOf(prop_keys, '${key}')]`

/** Partials of the events (of `events`, or of an inserted block) passing `where`, in the table's column order. */
export function sessionPartialsSql(where?: string): string {
  const fields = [
    ...ENTRY_PROPERTIES.map(([name, key]) => `  argMin(${value(key)}, timestamp_ms) AS first_${name}`),
    ...END_PROPERTIES.map(([name, key]) => `  argMax(${value(key)}, timestamp_ms) AS last_${name}`),
  ]
  return `SELECT project_id, ifNull(mat_session_id, '') AS session_id, min(timestamp_ms) AS min_ms, max(timestamp_ms) AS max_ms,
  argMax(distinct_id, timestamp_ms) AS last_distinct_id,
${fields.join(',\n')},
  countIf(event = '$pageview') AS pageviews, countIf(event = '$autocapture') AS autocaptures, countIf(event = '$screen') AS screens
FROM events
WHERE ifNull(mat_session_id, '') != ''${where ? ` AND (${where})` : ''}
GROUP BY project_id, session_id`
}

/** Session ids per statement (inlined in its IN list, under the server's max_query_size). */
const SESSIONS_PER_STATEMENT = 2_000

/** The sessions of the project's events passing `where` (SQL over `events`' columns): note them before a deletion. */
export async function touchedSessions(ch: ClickHouse, projectId: number, where: string): Promise<string[]> {
  const rows = await ch.query<{ s: string }>(
    `SELECT DISTINCT mat_session_id AS s FROM events WHERE project_id = ${intLiteral(projectId)} AND ifNull(mat_session_id, '') != '' AND (${where})`,
  )
  return rows.map((r) => r.s)
}

/**
 * Replaces the partials of the project's sessions `ids` by partials of their events still stored
 * (none when every event went), after a deletion of events has finished: a session keeps no field
 * of a deleted event. The partials' delete is a mutation, awaited before the new ones are written.
 */
export async function rebuildSessions(ch: ClickHouse, projectId: number, ids: readonly string[]): Promise<void> {
  const project = intLiteral(projectId)
  for (let i = 0; i < ids.length; i += SESSIONS_PER_STATEMENT) {
    const list = ids.slice(i, i + SESSIONS_PER_STATEMENT).map(stringLiteral).join(', ')
    await ch.exec(`ALTER TABLE sessions DELETE WHERE project_id = ${project} AND session_id IN (${list})`)
    await ch.awaitMutations('sessions')
    await ch.exec(`INSERT INTO sessions ${sessionPartialsSql(`project_id = ${project} AND mat_session_id IN (${list})`)}`)
  }
}

/** The project's sessions with events on both sides of a retention cut-off (from their partials): note them before it. */
export async function sessionsAcross(ch: ClickHouse, projectId: number, cutMs: number): Promise<string[]> {
  const rows = await ch.query<{ s: string }>(
    `SELECT session_id AS s FROM sessions WHERE project_id = ${intLiteral(projectId)}
     GROUP BY session_id HAVING min(min_ms) < ${intLiteral(cutMs)} AND max(max_ms) >= ${intLiteral(cutMs)}`,
  )
  return rows.map((r) => r.s)
}

/**
 * After retention deleted the project's events before `cutMs`: the partials that start before it go
 * (one mutation; they belong to sessions wholly before the cut-off, or to `across`), and the sessions
 * `across` it are rebuilt from their events left.
 */
export async function retainSessions(ch: ClickHouse, projectId: number, cutMs: number, across: readonly string[]): Promise<void> {
  const where = `project_id = ${intLiteral(projectId)} AND min_ms < ${intLiteral(cutMs)}`
  const old = Number((await ch.query<{ n: string }>(`SELECT count() AS n FROM sessions WHERE ${where}`))[0]?.n ?? 0)
  if (old > 0) {
    await ch.exec(`ALTER TABLE sessions DELETE WHERE ${where}`)
    await ch.awaitMutations('sessions')
  }
  await rebuildSessions(ch, projectId, across)
}
