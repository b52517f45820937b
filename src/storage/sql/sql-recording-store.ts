import type { RecordingBlock } from '../../modules/replay/recording-block.ts'
import type { RecordingFilter, RecordingMeta, RecordingStore, StoredBlock } from '../../modules/replay/recording-store.ts'
import type { SqlClient } from './sql-client.ts'

type Row = Record<string, any>

const BLOCK_COLUMNS = `project_id int, session_id text, byte_offset bigint, byte_length int, start_ms float8, end_ms float8,
  distinct_id text, window_ids text[], event_count int, click_count int, keypress_count int, mouse_activity_count int,
  console_log_count int, console_warn_count int, console_error_count int, active_ms bigint, first_url text, first_url_ms float8,
  content_digest text`

// The session rows of the given (project, session) keys, recomputed from all their blocks.
const UPSERT_SESSIONS = `
INSERT INTO session_recordings (project_id, session_id, distinct_id, start_time, end_time, duration_seconds, active_seconds,
  click_count, keypress_count, mouse_activity_count, console_log_count, console_warn_count, console_error_count,
  first_url, size_bytes, block_count, updated_at)
SELECT b.project_id, b.session_id, (array_agg(b.distinct_id ORDER BY b.start_time))[1], min(b.start_time), max(b.end_time),
  floor(extract(epoch FROM max(b.end_time) - min(b.start_time)))::int, (sum(b.active_ms) / 1000)::int,
  sum(b.click_count), sum(b.keypress_count), sum(b.mouse_activity_count), sum(b.console_log_count),
  sum(b.console_warn_count), sum(b.console_error_count),
  (array_agg(b.first_url ORDER BY b.first_url_time) FILTER (WHERE b.first_url IS NOT NULL))[1],
  sum(b.byte_length), count(*), now()
FROM session_recording_blocks b
JOIN (SELECT DISTINCT project_id, session_id FROM jsonb_to_recordset($1::jsonb) AS k(project_id int, session_id text)) k
  ON k.project_id = b.project_id AND k.session_id = b.session_id
GROUP BY b.project_id, b.session_id
ON CONFLICT (project_id, session_id) DO UPDATE SET distinct_id = EXCLUDED.distinct_id, start_time = EXCLUDED.start_time,
  end_time = EXCLUDED.end_time, duration_seconds = EXCLUDED.duration_seconds, active_seconds = EXCLUDED.active_seconds,
  click_count = EXCLUDED.click_count, keypress_count = EXCLUDED.keypress_count, mouse_activity_count = EXCLUDED.mouse_activity_count,
  console_log_count = EXCLUDED.console_log_count, console_warn_count = EXCLUDED.console_warn_count,
  console_error_count = EXCLUDED.console_error_count, first_url = EXCLUDED.first_url, size_bytes = EXCLUDED.size_bytes,
  block_count = EXCLUDED.block_count, updated_at = now()`

const META_SELECT = `SELECT r.*, p.uuid AS person_uuid FROM session_recordings r
  LEFT JOIN person_distinct_ids pd ON pd.project_id = r.project_id AND pd.distinct_id = r.distinct_id
  LEFT JOIN persons p ON p.id = pd.person_id`

const ORDER_SQL = {
  start_time: 'r.start_time DESC',
  duration: 'r.duration_seconds DESC',
  active_seconds: 'r.active_seconds DESC',
  click_count: 'r.click_count DESC',
  console_error_count: 'r.console_error_count DESC',
} as const satisfies Record<RecordingFilter['order'], string>

const KEY_SQL = {
  duration: 'r.duration_seconds',
  active_seconds: 'r.active_seconds',
  click_count: 'r.click_count',
  keypress_count: 'r.keypress_count',
  console_error_count: 'r.console_error_count',
} as const satisfies Record<RecordingFilter['predicates'][number]['key'], string>

const OPERATOR_SQL = { gt: '>', lt: '<', exact: '=' } as const

function toMeta(r: Row): RecordingMeta {
  return {
    projectId: r.project_id,
    sessionId: r.session_id,
    distinctId: r.distinct_id,
    startTime: new Date(r.start_time),
    endTime: new Date(r.end_time),
    durationSeconds: Number(r.duration_seconds),
    activeSeconds: Number(r.active_seconds),
    clickCount: Number(r.click_count),
    keypressCount: Number(r.keypress_count),
    mouseActivityCount: Number(r.mouse_activity_count),
    consoleLogCount: Number(r.console_log_count),
    consoleWarnCount: Number(r.console_warn_count),
    consoleErrorCount: Number(r.console_error_count),
    firstUrl: r.first_url,
    sizeBytes: Number(r.size_bytes),
    personUuid: r.person_uuid ?? null,
  }
}

/** RecordingStore over any SqlClient (PGlite embedded, PostgreSQL at scale). */
export function createSqlRecordingStore(db: SqlClient): RecordingStore {
  return {
    async insertBlocks(blocks) {
      if (blocks.length === 0) return
      const rows = blocks.map((b) => ({
        project_id: b.projectId, session_id: b.sessionId, byte_offset: b.offset, byte_length: b.length,
        start_ms: b.startMs, end_ms: b.endMs, distinct_id: b.distinctId, window_ids: b.windowIds, event_count: b.events,
        click_count: b.clicks, keypress_count: b.keypresses, mouse_activity_count: b.mouseActivity,
        console_log_count: b.consoleLogs, console_warn_count: b.consoleWarns, console_error_count: b.consoleErrors,
        active_ms: b.activeMs, first_url: b.firstUrl, first_url_ms: b.firstUrlMs, content_digest: b.digest ?? null,
      }))
      const json = JSON.stringify(rows)
      await db.inTransaction(async (tx) => {
        await tx.query(
          `INSERT INTO session_recording_blocks (project_id, session_id, byte_offset, byte_length, start_time, end_time, distinct_id,
             window_ids, event_count, click_count, keypress_count, mouse_activity_count, console_log_count, console_warn_count,
             console_error_count, active_ms, first_url, first_url_time, content_digest)
           SELECT b.project_id, b.session_id, b.byte_offset, b.byte_length, to_timestamp(b.start_ms / 1000), to_timestamp(b.end_ms / 1000),
             b.distinct_id, b.window_ids, b.event_count, b.click_count, b.keypress_count, b.mouse_activity_count, b.console_log_count,
             b.console_warn_count, b.console_error_count, b.active_ms, b.first_url, to_timestamp(b.first_url_ms / 1000), b.content_digest
           FROM jsonb_to_recordset($1::jsonb) AS b(${BLOCK_COLUMNS})
           JOIN projects p ON p.id = b.project_id
           ON CONFLICT DO NOTHING`,
          [json],
        )
        await tx.query(UPSERT_SESSIONS, [json])
      })
    },

    async list(projectId, f) {
      const params: unknown[] = [projectId]
      const where = ['r.project_id = $1']
      const add = (sql: (n: string) => string, value: unknown) => {
        params.push(value)
        where.push(sql(`$${params.length}`))
      }
      if (f.dateFrom) add((n) => `r.end_time >= ${n}`, f.dateFrom.toISOString())
      if (f.dateTo) add((n) => `r.start_time <= ${n}`, f.dateTo.toISOString())
      if (f.personUuid) add((n) => `p.uuid::text = ${n}`, f.personUuid)
      if (f.distinctIds) add((n) => `r.distinct_id = ANY(${n}::text[])`, f.distinctIds)
      if (f.sessionIds) add((n) => `r.session_id = ANY(${n}::text[])`, f.sessionIds)
      for (const p of f.predicates) add((n) => `${KEY_SQL[p.key]} ${OPERATOR_SQL[p.operator]} ${n}`, p.value)
      params.push(f.limit + 1, f.offset)
      const rows = await db.query(
        `${META_SELECT} WHERE ${where.join(' AND ')} ORDER BY ${ORDER_SQL[f.order]}, r.session_id
         LIMIT $${params.length - 1} OFFSET $${params.length}`,
        params,
      )
      return { results: rows.slice(0, f.limit).map(toMeta), hasNext: rows.length > f.limit }
    },

    async get(projectId, sessionId) {
      const [row] = await db.query(`${META_SELECT} WHERE r.project_id = $1 AND r.session_id = $2`, [projectId, sessionId])
      return row ? toMeta(row) : null
    },

    async blocks(projectId, sessionId, page): Promise<StoredBlock[]> {
      const rows = await db.query(
        `SELECT byte_offset, byte_length, start_time, end_time FROM session_recording_blocks
         WHERE project_id = $1 AND session_id = $2 ORDER BY start_time, byte_offset
         ${page ? 'OFFSET $3 LIMIT $4' : ''}`,
        page ? [projectId, sessionId, page.offset, page.limit] : [projectId, sessionId],
      )
      return rows.map((r) => ({
        projectId, sessionId, offset: Number(r.byte_offset), length: Number(r.byte_length),
        startTime: new Date(r.start_time), endTime: new Date(r.end_time),
      }))
    },

    async deleteSessions(projectId, sessionIds) {
      if (sessionIds.length === 0) return []
      return db.inTransaction(async (tx) => {
        await tx.query('DELETE FROM session_recording_blocks WHERE project_id = $1 AND session_id = ANY($2::text[])', [projectId, sessionIds])
        const rows = await tx.query<{ session_id: string }>(
          'DELETE FROM session_recordings WHERE project_id = $1 AND session_id = ANY($2::text[]) RETURNING session_id',
          [projectId, sessionIds],
        )
        return rows.map((r) => r.session_id)
      })
    },

    async sessionsOfDistinctIds(projectId, distinctIds) {
      if (distinctIds.length === 0) return []
      const rows = await db.query<{ session_id: string }>(
        'SELECT session_id FROM session_recordings WHERE project_id = $1 AND distinct_id = ANY($2::text[])',
        [projectId, distinctIds],
      )
      return rows.map((r) => r.session_id)
    },

    async expired(now, limit) {
      const rows = await db.query<{ project_id: number; session_id: string }>(
        `SELECT r.project_id, r.session_id FROM session_recordings r JOIN projects p ON p.id = r.project_id
         WHERE r.end_time < $1::timestamptz - make_interval(days => COALESCE((p.session_recording->>'retentionDays')::int, 30))
         LIMIT $2`,
        [now.toISOString(), limit],
      )
      return rows.map((r) => ({ projectId: r.project_id, sessionId: r.session_id }))
    },
  }
}
