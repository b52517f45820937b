import type { DuckDBConnection } from '@duckdb/node-api'
import type { EventRetentionStore } from '../../modules/retention/event-retention-store.ts'

/**
 * Retention on DuckDB: at most `limit` events a step (a DELETE by rowid of the oldest), so the
 * ingestion writer and queries wait for one short statement at a time, never the whole deletion.
 */
export function createDuckDbEventRetention(connection: DuckDBConnection): EventRetentionStore {
  return {
    async deleteBefore(projectId, before, limit) {
      const at = before.toISOString()
      const events = await connection.run(
        `DELETE FROM events WHERE rowid IN (
           SELECT rowid FROM events WHERE project_id = ?::INTEGER AND timestamp < ?::TIMESTAMPTZ LIMIT ?::BIGINT)`,
        [projectId, at, limit],
      )
      const deleted = Number(events.rowsChanged)
      const letters = await connection.run('DELETE FROM events_dead_letter WHERE project_id = ?::INTEGER AND failed_at < ?::TIMESTAMPTZ', [projectId, at])
      return { events: deleted, deadLetters: Number(letters.rowsChanged), more: deleted >= limit }
    },
  }
}
