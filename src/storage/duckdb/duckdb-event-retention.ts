import type { DuckDBConnection } from '@duckdb/node-api'
import type { EventRetentionStore } from '../../modules/retention/event-retention-store.ts'
import { noteTouchedSessions, rebuildTouchedSessions, serializeSessionRewrite } from './duckdb-sessions.ts'

/**
 * Retention on DuckDB: at most `limit` events a step (a DELETE by rowid of the oldest), so the
 * ingestion writer and queries wait for one short statement at a time, never the whole deletion.
 * Each step rebuilds the sessions of the events it deleted from the events left, in its transaction.
 * The last step also removes the project's person overrides that no stored event needs any more.
 */
export function createDuckDbEventRetention(connection: DuckDBConnection): EventRetentionStore {
  return {
    async deleteBefore(projectId, before, limit) {
      const at = before.toISOString()
      // The step and the rebuild of its sessions in one transaction (duckdb-sessions.ts).
      const deleted = await serializeSessionRewrite(async () => {
        await connection.run('BEGIN TRANSACTION')
        try {
          await connection.run(
            `CREATE OR REPLACE TEMP TABLE retention_step AS
             SELECT rowid AS r FROM events WHERE project_id = $1::INTEGER AND timestamp < $2::TIMESTAMPTZ LIMIT $3::BIGINT`,
            [projectId, at, limit],
          )
          await noteTouchedSessions(connection, projectId, 'rowid IN (SELECT r FROM retention_step)')
          const n = Number((await connection.run('DELETE FROM events WHERE rowid IN (SELECT r FROM retention_step)')).rowsChanged)
          await rebuildTouchedSessions(connection, projectId)
          await connection.run('DROP TABLE retention_step')
          await connection.run('COMMIT')
          return n
        } catch (err) {
          await connection.run('ROLLBACK').catch(() => undefined)
          throw err
        }
      })
      const letters = await connection.run('DELETE FROM events_dead_letter WHERE project_id = ?::INTEGER AND failed_at < ?::TIMESTAMPTZ', [projectId, at])
      const more = deleted >= limit
      // Once the old events are gone: overrides whose old person has no event left are never read
      // again (a merged-away person gets no new events; they are stored under the person it became).
      const overrides = more
        ? 0
        : Number((await connection.run(
            `DELETE FROM person_overrides WHERE project_id = ?::INTEGER AND old_person_id NOT IN (
               SELECT person_id FROM events WHERE project_id = ?::INTEGER AND person_id IS NOT NULL)`,
            [projectId, projectId],
          )).rowsChanged)
      return { events: deleted, deadLetters: Number(letters.rowsChanged), personOverrides: overrides, more }
    },
  }
}
