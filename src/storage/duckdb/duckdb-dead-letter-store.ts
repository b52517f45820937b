import type { DuckDBConnection } from '@duckdb/node-api'
import type { DeadLetterStore } from '../../ingestion/dead-letter-store.ts'

/** Dead letters in the `events_dead_letter` table of the events database. */
export function createDuckDbDeadLetterStore(connection: DuckDBConnection): DeadLetterStore {
  return {
    async insert(letters) {
      if (letters.length === 0) return
      const placeholders = letters.map(() => '(?::TIMESTAMPTZ, ?, ?, ?, ?, ?, ?)').join(', ')
      const params = letters.flatMap((l) => [
        l.failedAt.toISOString(),
        l.uuid,
        l.projectId,
        l.step,
        l.reason,
        l.error,
        l.payload,
      ])
      await connection.run(
        `INSERT INTO events_dead_letter (failed_at, uuid, project_id, step, reason, error, payload) VALUES ${placeholders}`,
        params,
      )
    },
  }
}
