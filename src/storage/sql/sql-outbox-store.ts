import type { ClaimedMessage, OutboxCounts, OutboxDelivery, OutboxStore } from '../../modules/notifications/outbox-store.ts'
import type { SqlClient } from './sql-client.ts'

function toDelivery(r: Record<string, any>): OutboxDelivery {
  return {
    id: Number(r.id),
    channel: r.channel,
    idempotencyKey: r.idempotency_key,
    status: r.status,
    attempts: r.attempts,
    lastStatus: r.last_status,
    lastError: r.last_error,
    createdAt: new Date(r.created_at),
    sentAt: r.sent_at ? new Date(r.sent_at) : null,
  }
}

/** OutboxStore over any SqlClient (PGlite embedded, PostgreSQL at scale). */
export function createSqlOutboxStore(db: SqlClient): OutboxStore {
  return {
    async enqueue(messages) {
      if (messages.length === 0) return 0
      const rows = await db.query(
        `INSERT INTO outbox_messages (project_id, channel, idempotency_key, url, headers, body)
         SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::text[])
         ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`,
        [
          messages.map((m) => m.projectId),
          messages.map((m) => m.channel),
          messages.map((m) => m.idempotencyKey),
          messages.map((m) => m.url),
          messages.map((m) => JSON.stringify(m.headers)),
          messages.map((m) => m.body),
        ],
      )
      return rows.length
    },
    async claimDue(limit, leaseMs) {
      const rows = await db.query(
        `UPDATE outbox_messages SET locked_until = now() + ($2::int * interval '1 millisecond')
         WHERE id IN (
           SELECT id FROM outbox_messages
           WHERE status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
           ORDER BY next_attempt_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING id, project_id, channel, idempotency_key, url, headers, body, attempts`,
        [limit, leaseMs],
      )
      return rows
        .map((r): ClaimedMessage => ({
          id: Number(r.id),
          projectId: r.project_id,
          channel: r.channel,
          idempotencyKey: r.idempotency_key,
          url: r.url,
          headers: r.headers ?? {},
          body: r.body,
          attempts: r.attempts,
        }))
        .sort((a, b) => a.id - b.id)
    },
    async markSent(id, httpStatus) {
      await db.query(
        `UPDATE outbox_messages SET status = 'sent', attempts = attempts + 1, last_status = $2, last_error = NULL,
         sent_at = now(), locked_until = NULL WHERE id = $1`,
        [id, httpStatus],
      )
    },
    async markRetry(id, nextAttemptAt, httpStatus, error) {
      await db.query(
        `UPDATE outbox_messages SET attempts = attempts + 1, next_attempt_at = $2, last_status = $3, last_error = $4,
         locked_until = NULL WHERE id = $1`,
        [id, nextAttemptAt.toISOString(), httpStatus, error],
      )
    },
    async postpone(ids, until) {
      await db.query('UPDATE outbox_messages SET next_attempt_at = $2, locked_until = NULL WHERE id = ANY($1::bigint[])', [ids, until.toISOString()])
    },
    async markFailed(id, httpStatus, error) {
      await db.query(
        `UPDATE outbox_messages SET status = 'failed', attempts = attempts + 1, last_status = $2, last_error = $3,
         locked_until = NULL WHERE id = $1`,
        [id, httpStatus, error],
      )
    },
    async dropOverBacklog(channel, keep) {
      const rows = await db.query(
        `UPDATE outbox_messages SET status = 'dropped', locked_until = NULL
         WHERE id IN (
           SELECT id FROM outbox_messages WHERE status = 'pending' AND channel = $1
           ORDER BY id DESC OFFSET $2)
         RETURNING id`,
        [channel, keep],
      )
      return rows.length
    },
    async pendingByChannel() {
      const rows = await db.query(
        `SELECT channel, count(*)::int AS pending, min(created_at) AS oldest FROM outbox_messages
         WHERE status = 'pending' GROUP BY channel`,
      )
      return new Map(rows.map((r): [string, OutboxCounts] => [r.channel, { pending: r.pending, oldestPendingAt: r.oldest ? new Date(r.oldest) : null }]))
    },
    async recent(projectId, channel, limit) {
      const rows = await db.query(
        `SELECT * FROM outbox_messages WHERE project_id = $1 AND channel = $2 ORDER BY id DESC LIMIT $3`,
        [projectId, channel, limit],
      )
      return rows.map(toDelivery)
    },
    async replayFailed(projectId, channel) {
      const rows = await db.query(
        `UPDATE outbox_messages SET status = 'pending', attempts = 0, next_attempt_at = now(), locked_until = NULL
         WHERE project_id = $1 AND channel = $2 AND status = 'failed' RETURNING id`,
        [projectId, channel],
      )
      return rows.length
    },
  }
}
