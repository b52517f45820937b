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

const COLUMNS = 'id, project_id, channel, idempotency_key, url, headers, body, attempts'

/**
 * The due messages a claim takes: oldest first, at most `$3` of a channel (the window), none of the
 * channels in `$4` nor the ids in `$5`. With leases the candidates are locked (SKIP LOCKED: another
 * sender's are passed over) and leased until `$6` ms from now.
 */
function claimSql(leases: boolean): string {
  const candidates = `
    SELECT id, row_number() OVER (PARTITION BY channel ORDER BY next_attempt_at, id) AS n FROM (
      SELECT id, channel, next_attempt_at FROM outbox_messages
      WHERE status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
        AND channel <> ALL($2::text[]) AND id <> ALL($3::bigint[])
      ORDER BY next_attempt_at, id LIMIT $1 ${leases ? 'FOR UPDATE SKIP LOCKED' : ''}) candidates`
  const chosen = `SELECT id FROM (${candidates}) ranked WHERE n <= $4`
  return leases
    ? `UPDATE outbox_messages SET locked_until = now() + ($5::int * interval '1 millisecond') WHERE id IN (${chosen}) RETURNING ${COLUMNS}`
    : `SELECT ${COLUMNS} FROM outbox_messages WHERE id IN (${chosen})`
}

/**
 * OutboxStore over any SqlClient (PGlite embedded, PostgreSQL at scale). `leases: false` is for a
 * database only one process opens (PGlite): a claim is a read, and the one sender keeps what it has
 * in hand out of the next claims itself (`exclude`), which saves a write of every message.
 */
export function createSqlOutboxStore(db: SqlClient, opts: { leases?: boolean } = {}): OutboxStore {
  const leases = opts.leases ?? true
  const claim = claimSql(leases)
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
    async claimDue(limit, leaseMs, opts = {}) {
      // Read along outbox_due_order: without statistics (PGlite never analyses) the planner would
      // sort the whole due backlog for every claim.
      const params = [limit, [...(opts.skip ?? [])], [...(opts.exclude ?? [])], opts.perChannel ?? limit, ...(leases ? [leaseMs] : [])]
      const rows = await db.inTransaction(async (tx) => {
        await tx.exec('SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off')
        return tx.query(claim, params)
      })
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
    async settle(outcomes) {
      if (outcomes.length === 0) return
      await db.query(
        `UPDATE outbox_messages o SET
           status = CASE WHEN u.outcome = 'retry' THEN 'pending' ELSE u.outcome END,
           attempts = o.attempts + 1, last_status = u.http_status, last_error = u.error,
           sent_at = CASE WHEN u.outcome = 'sent' THEN now() ELSE o.sent_at END,
           next_attempt_at = COALESCE(u.retry_at, o.next_attempt_at), locked_until = NULL
         FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[], $5::timestamptz[]) AS u(id, outcome, http_status, error, retry_at)
         WHERE o.id = u.id`,
        [
          outcomes.map((o) => o.id),
          outcomes.map((o) => o.status),
          outcomes.map((o) => o.httpStatus),
          outcomes.map((o) => (o.status === 'sent' ? null : o.error)),
          outcomes.map((o) => (o.status === 'retry' ? o.retryAt.toISOString() : null)),
        ],
      )
    },
    async postpone(ids, until) {
      if (ids.length === 0) return
      await db.query('UPDATE outbox_messages SET next_attempt_at = $2, locked_until = NULL WHERE id = ANY($1::bigint[])', [ids, until.toISOString()])
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
    async deleteSettled(before, limit) {
      // Ids grow with created_at: the oldest first, by the primary key.
      const rows = await db.query(
        `DELETE FROM outbox_messages WHERE id IN (
           SELECT id FROM outbox_messages WHERE status <> 'pending' AND created_at < $1 ORDER BY id LIMIT $2)
         RETURNING id`,
        [before, limit],
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
