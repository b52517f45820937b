import type { BlockLocation, RecordingBlobStore } from '../../modules/replay/recording-blob-store.ts'
import type { SqlClient } from './sql-client.ts'

/**
 * RecordingBlobStore in the metadata database: a row of `session_recording_bytes` per block, so
 * that the bytes one capture process took are there for every api process of a cluster (the file
 * store keeps them in one process's data dir). A location written here has a negative offset,
 * `-id`; a location with an offset >= 0 is a byte range of a session file written before this store
 * was chosen, read from `files` (an upgraded deployment keeps its older recordings playable).
 *
 * `appendBlock` resolves once the row is committed, as the port requires of durability; the bytes of
 * a failed insert are in no row.
 */
export function createSqlRecordingBlobStore(db: SqlClient, files: RecordingBlobStore | null): RecordingBlobStore {
  return {
    async appendBlock(projectId, sessionId, data) {
      const [row] = await db.query<{ id: string | number }>(
        'INSERT INTO session_recording_bytes (project_id, session_id, data) VALUES ($1, $2, $3) RETURNING id',
        [projectId, sessionId, data],
      )
      return { projectId, sessionId, offset: -Number(row!.id), length: data.length }
    },

    async readBlock(loc: BlockLocation) {
      if (loc.offset >= 0) return files ? files.readBlock(loc) : null
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
      await files?.deleteSessions(projectId, sessionIds)
    },

    async diskBytes() {
      const [row] = await db.query<{ bytes: string | number }>("SELECT pg_total_relation_size('session_recording_bytes') AS bytes")
      return Number(row?.bytes ?? 0) + (files ? await files.diskBytes() : 0)
    },
  }
}
