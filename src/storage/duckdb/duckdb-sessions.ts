import type { DuckDBConnection } from '@duckdb/node-api'

/**
 * The sessions aggregate on DuckDB (migration 0011-sessions.sql; docs/web-analytics.md). The table
 * macro `session_partials(relation)` of that migration is the one definition of a partial: the event
 * store applies it to each staged batch, the migration's backfill and `FILL_SESSIONS_SQL` to `events`.
 */

/** Partials of every stored event, as the migration's backfill writes them (the bench's fill of generated events). */
export const FILL_SESSIONS_SQL = `INSERT INTO sessions SELECT * FROM session_partials('events')`

const TOUCHED = 'touched_sessions'
const KEPT = 'touched_session_events'

/**
 * Notes the sessions of the project's events matching `where` (SQL over `events`' columns, its
 * parameters numbered from $2; $1 is the project), before they are deleted: `rebuildTouchedSessions`
 * then rebuilds them from the events left. A temporary table of the connection, for its transaction.
 */
export async function noteTouchedSessions(c: DuckDBConnection, projectId: number, where: string, params: unknown[] = []): Promise<void> {
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${TOUCHED} AS SELECT DISTINCT mat_session_id AS session_id FROM events
     WHERE project_id = $1::INTEGER AND mat_session_id <> '' AND (${where})`,
    [projectId, ...params] as never,
  )
}

/**
 * Replaces the partials of the noted sessions by partials of their events still stored (none when
 * every event went): a session keeps no field of a deleted event.
 */
export async function rebuildTouchedSessions(c: DuckDBConnection, projectId: number): Promise<void> {
  await c.run(`DELETE FROM sessions WHERE project_id = $1::INTEGER AND session_id IN (SELECT session_id FROM ${TOUCHED})`, [projectId])
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${KEPT} AS SELECT * FROM events WHERE project_id = $1::INTEGER AND mat_session_id IN (SELECT session_id FROM ${TOUCHED})`,
    [projectId],
  )
  await c.run(`INSERT INTO sessions SELECT * FROM session_partials('${KEPT}')`)
  await c.run(`DROP TABLE ${KEPT}`)
  await c.run(`DROP TABLE ${TOUCHED}`)
}

let rewrites: Promise<unknown> = Promise.resolve()

/**
 * Runs `fn` (a transaction that deletes partials: a rebuild above or the compaction) after the other
 * such transactions of this process have ended. Two transactions deleting the same partial conflict
 * in DuckDB ("Conflict on tuple deletion") and one fails: a GDPR deletion or a retention step would
 * fail because the compaction happened to merge the same session. Ingestion only appends partials,
 * which never conflicts, and does not take this.
 */
export function serializeSessionRewrite<T>(fn: () => Promise<T>): Promise<T> {
  const run = rewrites.then(fn)
  rewrites = run.catch(() => undefined)
  return run
}
