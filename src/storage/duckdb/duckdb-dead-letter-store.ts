import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api'
import type { DeadLetterQuery, DeadLetterStore, StoredDeadLetter } from '../../ingestion/dead-letter-store.ts'

const COLUMNS = 'id, epoch_ms(failed_at) AS failed_ms, uuid, project_id, step, reason, error, payload, epoch_ms(replayed_at) AS replayed_ms'

function where(q: DeadLetterQuery): { sql: string; params: DuckDBValue[] } {
  const parts: string[] = []
  const params: DuckDBValue[] = []
  if (q.projectId !== undefined) {
    parts.push('project_id = ?::INTEGER')
    params.push(q.projectId)
  }
  if (q.pendingOnly) parts.push('replayed_at IS NULL')
  if (q.ids) {
    if (q.ids.length === 0) parts.push('false')
    else {
      parts.push(`id IN (${q.ids.map(() => '?::BIGINT').join(', ')})`)
      params.push(...q.ids.map((id) => BigInt(id)))
    }
  }
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params }
}

function toLetter(r: Record<string, unknown>): StoredDeadLetter {
  const time = (v: unknown) => (v === null || v === undefined ? null : new Date(Number(v)))
  return {
    id: Number(r.id),
    failedAt: time(r.failed_ms)!,
    uuid: (r.uuid as string | null) ?? null,
    projectId: r.project_id === null || r.project_id === undefined ? null : Number(r.project_id),
    step: String(r.step),
    reason: String(r.reason),
    error: (r.error as string | null) ?? null,
    payload: String(r.payload),
    replayedAt: time(r.replayed_ms),
  }
}

/** Dead letters in the `events_dead_letter` table of the events database. */
export function createDuckDbDeadLetterStore(connection: DuckDBConnection): DeadLetterStore {
  return {
    async insert(letters) {
      if (letters.length === 0) return
      const placeholders = letters.map(() => "(nextval('events_dead_letter_id'), ?::TIMESTAMPTZ, ?, ?, ?, ?, ?, ?)").join(', ')
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
        `INSERT INTO events_dead_letter (id, failed_at, uuid, project_id, step, reason, error, payload) VALUES ${placeholders}`,
        params,
      )
    },
    async list(q) {
      const w = where(q)
      const count = (await connection.runAndReadAll(`SELECT count(*) AS n FROM events_dead_letter ${w.sql}`, w.params)).getRowObjects()[0]!.n
      const rows = await connection.runAndReadAll(
        `SELECT ${COLUMNS} FROM events_dead_letter ${w.sql} ORDER BY id DESC LIMIT ${Math.floor(q.limit)} OFFSET ${Math.floor(q.offset)}`,
        w.params,
      )
      return { count: Number(count), rows: rows.getRowObjects().map(toLetter) }
    },
    async markReplayed(ids, at) {
      if (ids.length === 0) return
      await connection.run(`UPDATE events_dead_letter SET replayed_at = ?::TIMESTAMPTZ WHERE id IN (${ids.map(() => '?::BIGINT').join(', ')})`, [
        at.toISOString(),
        ...ids.map((id) => BigInt(id)),
      ])
    },
  }
}
