import type { BlockLocation, RecordingBlobStore } from '../../modules/replay/recording-blob-store.ts'
import type { SqlClient } from './sql-client.ts'

/**
 * Recording bytes in the metadata database and in session files, side by side. A block in the
 * database is a row of `session_recording_bytes` and its location has a negative offset, `-id`; a
 * location with an offset >= 0 is a byte range of a session file. Reads and deletes serve both, so a
 * deployment that changes `TALLY_REPLAY_STORE`, or a dump moved between stacks (`tally import`),
 * keeps every recording playable; `appendTo` says where new blocks go:
 * - `database` (the default on PostgreSQL): every capture and api process of a cluster reads what any
 *   of them wrote. `appendBlock` resolves once the row is committed; a failed insert leaves no row.
 * - `files`: the file store's own appends (one data dir per process).
 */
export function createSqlRecordingBlobStore(db: SqlClient, files: RecordingBlobStore, appendTo: 'database' | 'files'): RecordingBlobStore {
  return {
    async appendBlock(projectId, sessionId, data) {
      if (appendTo === 'files') return files.appendBlock(projectId, sessionId, data)
      const [row] = await db.query<{ id: string | number }>(
        'INSERT INTO session_recording_bytes (project_id, session_id, data) VALUES ($1, $2, $3) RETURNING id',
        [projectId, sessionId, data],
      )
      return { projectId, sessionId, offset: -Number(row!.id), length: data.length }
    },

    async readBlock(loc: BlockLocation) {
      if (loc.offset >= 0) return files.readBlock(loc)
      const [row] = await db.query<{ data: Uint8Array }>(
        'SELECT data FROM session_recording_bytes WHERE project_id = $1 AND session_id = $2 AND id = $3',
        [loc.projectId, loc.sessionId, -loc.offset],
      )
      if (!row || row.data.length !== loc.length) return null
      return Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength)
    },

    async deleteSessions(projectId, sessionIds) {
      if (sessionIds.length === 0) return
      await db.query('DELETE FROM session_recording_bytes WHERE project_id = $1 AND session_id = ANY($2::text[])', [projectId, [...sessionIds]])
      await files.deleteSessions(projectId, sessionIds)
    },

    async diskBytes() {
      const [row] = await db.query<{ bytes: string | number }>("SELECT pg_total_relation_size('session_recording_bytes') AS bytes")
      return Number(row?.bytes ?? 0) + (await files.diskBytes())
    },
  }
}
