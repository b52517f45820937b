import { randomBytes } from 'node:crypto'
import type { DeadLetterQuery, DeadLetterStore, StoredDeadLetter } from '../../ingestion/dead-letter-store.ts'
import type { ClickHouse } from './open-clickhouse.ts'
import { intLiteral } from './clickhouse-literals.ts'

interface Row {
  id: string
  failed_at_ms: string
  uuid: string | null
  project_id: number | null
  step: string
  reason: string
  error: string | null
  payload: string
  replayed_ms: string
}

/**
 * Dead letters in ClickHouse (`events_dead_letter`), append-only: a replay is a row of
 * `events_dead_letter_replay` (an UPDATE would be an asynchronous mutation rewriting parts). Several
 * worker processes write letters and ClickHouse has no sequence, so an id is random below 2^53 (a
 * JavaScript number, as the API gives it): a million letters share an id with a probability of about
 * 1 in 18,000, where the table's highest plus one gave two workers the same id whenever they failed
 * events at once. Lists are newest first by the failure time.
 */
export function createClickHouseDeadLetterStore(ch: ClickHouse): DeadLetterStore {
  function where(q: DeadLetterQuery): string {
    const parts: string[] = []
    if (q.projectId !== undefined) parts.push(`project_id = ${intLiteral(q.projectId)}`)
    if (q.pendingOnly) parts.push('id NOT IN (SELECT id FROM events_dead_letter_replay)')
    if (q.ids) parts.push(q.ids.length === 0 ? '0' : `id IN (${q.ids.map((id) => intLiteral(Math.floor(id))).join(', ')})`)
    return parts.length ? `WHERE ${parts.join(' AND ')}` : ''
  }

  return {
    async insert(letters) {
      if (letters.length === 0) return
      await ch.insert(
        'events_dead_letter',
        letters.map((l) => ({
          id: randomId(),
          failed_at_ms: l.failedAt.getTime(),
          uuid: l.uuid,
          project_id: l.projectId,
          step: l.step,
          reason: l.reason,
          error: l.error,
          payload: l.payload,
        })),
      )
    },
    async list(q) {
      const w = where(q)
      const count = await ch.query<{ n: string }>(`SELECT count() AS n FROM events_dead_letter ${w}`)
      const rows = await ch.query<Row>(
        `SELECT id, failed_at_ms, uuid, project_id, step, reason, error, payload, replayed_ms
         FROM events_dead_letter
         ANY LEFT JOIN (SELECT id, max(replayed_at_ms) AS replayed_ms FROM events_dead_letter_replay GROUP BY id) USING id
         ${w} ORDER BY failed_at_ms DESC, id DESC LIMIT ${intLiteral(Math.floor(q.offset))}, ${intLiteral(Math.floor(q.limit))}`,
      )
      return { count: Number(count[0]?.n ?? 0), rows: rows.map(toLetter) }
    },
    async markReplayed(ids, at) {
      if (ids.length === 0) return
      await ch.insert('events_dead_letter_replay', ids.map((id) => ({ id, replayed_at_ms: at.getTime() })))
    },
  }
}

/** A uniformly random id in [1, 2^53). */
function randomId(): number {
  return Number(randomBytes(8).readBigUInt64BE() >> 11n) || 1
}

function toLetter(r: Row): StoredDeadLetter {
  // Without a replay row the LEFT JOIN gives the column's default, 0 (no join_use_nulls on 18.16's default).
  const replayed = Number(r.replayed_ms ?? 0)
  return {
    id: Number(r.id),
    failedAt: new Date(Number(r.failed_at_ms)),
    uuid: r.uuid ?? null,
    projectId: r.project_id === null || r.project_id === undefined ? null : Number(r.project_id),
    step: r.step,
    reason: r.reason,
    error: r.error ?? null,
    payload: r.payload,
    replayedAt: replayed === 0 ? null : new Date(replayed),
  }
}
