import { createHash } from 'node:crypto'
import type { ClaimedMessage, OutboxCounts, OutboxDelivery, OutboxMessage, OutboxStore } from '../../modules/notifications/outbox-store.ts'
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
const BATCH_COLUMNS = 'id, project_id, channel, url, headers, messages'

/** A batch row's `messages`: `[idempotency key, body]` in order. */
type BatchEntry = [key: string, body: string]

const leaseUntil = (param: string) => `now() + (${param}::int * interval '1 millisecond')`

/**
 * The due own rows a claim takes: oldest first, at most `$4` of a channel (the window), none of the
 * channels in `$2` nor the ids in `$3`. With leases the candidates are locked (SKIP LOCKED: another
 * sender's are passed over) and leased until `$5` ms from now.
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
    ? `UPDATE outbox_messages SET locked_until = ${leaseUntil('$5')} WHERE id IN (${chosen}) RETURNING ${COLUMNS}`
    : `SELECT ${COLUMNS} FROM outbox_messages WHERE id IN (${chosen})`
}

/**
 * The pending batch rows a claim takes, oldest first: a channel's rows while the messages of those
 * before stay under `$4` (its first always), the same skips and lease as `claimSql`.
 */
function claimBatchesSql(leases: boolean): string {
  const candidates = `
    SELECT id, sum(size) OVER (PARTITION BY channel ORDER BY id) - size AS before FROM (
      SELECT id, channel, size FROM outbox_batches
      WHERE status = 'pending' AND (locked_until IS NULL OR locked_until < now())
        AND channel <> ALL($2::text[]) AND id <> ALL($3::bigint[])
      ORDER BY id LIMIT $1 ${leases ? 'FOR UPDATE SKIP LOCKED' : ''}) candidates`
  const chosen = `SELECT id FROM (${candidates}) ranked WHERE before < $4`
  return leases
    ? `UPDATE outbox_batches SET locked_until = ${leaseUntil('$5')} WHERE id IN (${chosen}) RETURNING ${BATCH_COLUMNS}`
    : `SELECT ${BATCH_COLUMNS} FROM outbox_batches WHERE id IN (${chosen})`
}

/**
 * Own rows' outcomes, batch rows done and their unsent messages as own rows (with the batch's target
 * and queue time), in one statement. A batch row no longer pending (dropped, or done by a sender whose
 * lease it outlived) adds none.
 */
const SETTLE_SQL = `
  WITH own AS (
    UPDATE outbox_messages o SET
      status = CASE WHEN u.outcome = 'retry' THEN 'pending' ELSE u.outcome END,
      attempts = o.attempts + 1, last_status = u.http_status, last_error = u.error,
      sent_at = CASE WHEN u.outcome = 'sent' THEN now() ELSE o.sent_at END,
      next_attempt_at = COALESCE(u.retry_at, o.next_attempt_at), locked_until = NULL
    FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[], $5::timestamptz[]) AS u(id, outcome, http_status, error, retry_at)
    WHERE o.id = u.id
    RETURNING o.id
  ), done AS (
    UPDATE outbox_batches b SET status = 'sent', sent_at = now(), last_status = d.http_status, locked_until = NULL
    FROM unnest($6::bigint[], $7::int[]) AS d(id, http_status)
    WHERE b.id = d.id AND b.status = 'pending'
    RETURNING b.id, b.project_id, b.channel, b.url, b.headers, b.created_at
  )
  INSERT INTO outbox_messages (project_id, channel, idempotency_key, url, headers, body, status, attempts, next_attempt_at, last_status, last_error, created_at)
  SELECT done.project_id, done.channel, u.key, done.url, done.headers, u.body, u.status, u.attempts, u.retry_at, u.http_status, u.error, done.created_at
  FROM unnest($8::bigint[], $9::text[], $10::text[], $11::text[], $12::int[], $13::timestamptz[], $14::int[], $15::text[])
    AS u(batch_id, key, body, status, attempts, retry_at, http_status, error)
  JOIN done ON done.id = u.batch_id
  ON CONFLICT (idempotency_key) DO NOTHING`

/**
 * A channel's pending messages, own and batch rows, newest first with the count up to each: those
 * past `$2` are dropped (a batch row whole, so at most `$2` stay).
 */
const OVER_BACKLOG_SQL = `
  SELECT kind, id, n FROM (
    SELECT kind, id, n, sum(n) OVER (ORDER BY created_at DESC, kind DESC, id DESC ROWS UNBOUNDED PRECEDING) AS upto FROM (
      SELECT 'own' AS kind, id, 1 AS n, created_at FROM outbox_messages WHERE status = 'pending' AND channel = $1
      UNION ALL
      SELECT 'batch', id, size, created_at FROM outbox_batches WHERE status = 'pending' AND channel = $1) pending) counted
  WHERE upto > $2`

/**
 * A channel's latest messages: own rows, and the messages of its latest batch rows that have no row
 * of their own (shown with their batch row's status and answer; sent with it means one try).
 */
const RECENT_BATCHED_SQL = `
  SELECT b.id, b.channel, m.value->>0 AS idempotency_key, b.status,
    CASE WHEN b.status = 'sent' THEN 1 ELSE 0 END AS attempts, b.last_status, NULL AS last_error, b.created_at, b.sent_at
  FROM (SELECT * FROM outbox_batches WHERE project_id = $1 AND channel = $2 ORDER BY id DESC LIMIT $3) b
  CROSS JOIN LATERAL json_array_elements(b.messages::json) WITH ORDINALITY AS m(value, ord)
  WHERE NOT EXISTS (SELECT 1 FROM outbox_messages o WHERE o.idempotency_key = m.value->>0)
  ORDER BY b.id DESC, m.ord DESC LIMIT $3`

/** A batch row's key: its channel and its messages' keys, so the same micro-batch planned again is the same row. */
function batchKey(channel: string, messages: readonly OutboxMessage[]): string {
  const hash = createHash('sha256')
  for (const m of messages) hash.update(m.idempotencyKey).update('\n')
  return `${channel}:${hash.digest('base64url')}`
}

/**
 * The messages by batch row: one per project, channel, URL and headers, in their order. A channel's
 * messages of one batch share their headers object (the rule's), so headers are compared by reference
 * first and as JSON only when that differs.
 */
function groupIntoBatches(messages: readonly OutboxMessage[]): OutboxMessage[][] {
  const groups = new Map<string, OutboxMessage[][]>()
  const out: OutboxMessage[][] = []
  for (const m of messages) {
    const key = `${m.projectId}\u0000${m.channel}\u0000${m.url}`
    let candidates = groups.get(key)
    if (!candidates) groups.set(key, (candidates = []))
    let group = candidates.find((g) => g[0]!.headers === m.headers || JSON.stringify(g[0]!.headers) === JSON.stringify(m.headers))
    if (!group) {
      candidates.push((group = []))
      out.push(group)
    }
    group.push(m)
  }
  return out
}

/**
 * OutboxStore over any SqlClient (PGlite embedded, PostgreSQL at scale). `leases: false` is for a
 * database only one process opens (PGlite): a claim is a read, and the one sender keeps what it has
 * in hand out of the next claims itself (`exclude`), which saves a write of every row.
 */
export function createSqlOutboxStore(db: SqlClient, opts: { leases?: boolean } = {}): OutboxStore {
  const leases = opts.leases ?? true
  const claim = claimSql(leases)
  const claimBatches = claimBatchesSql(leases)
  return {
    async enqueue(messages) {
      if (messages.length === 0) return 0
      const batches = groupIntoBatches(messages)
      const rows = await db.query<{ size: number }>(
        `INSERT INTO outbox_batches (project_id, channel, batch_key, url, headers, size, messages)
         SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::int[], $7::text[])
         ON CONFLICT (batch_key) DO NOTHING RETURNING size`,
        [
          batches.map((b) => b[0]!.projectId),
          batches.map((b) => b[0]!.channel),
          batches.map((b) => batchKey(b[0]!.channel, b)),
          batches.map((b) => b[0]!.url),
          batches.map((b) => JSON.stringify(b[0]!.headers)),
          batches.map((b) => b.length),
          batches.map((b) => JSON.stringify(b.map((m): BatchEntry => [m.idempotencyKey, m.body]))),
        ],
      )
      return rows.reduce((n, r) => n + r.size, 0)
    },
    async claimDue(limit, leaseMs, opts = {}) {
      const skip = [...(opts.skip ?? [])]
      const perChannel = opts.perChannel ?? limit
      const lease = leases ? [leaseMs] : []
      const [own, batches] = await db.inTransaction(async (tx) => {
        // Read along outbox_due_order: without statistics (PGlite never analyses) the planner would
        // sort the whole due backlog for every claim.
        await tx.exec('SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off')
        return [
          await tx.query(claim, [limit, skip, [...(opts.exclude ?? [])], perChannel, ...lease]),
          await tx.query(claimBatches, [limit, skip, [...(opts.excludeBatches ?? [])], perChannel, ...lease]),
        ]
      })
      const claimed = own
        .map((r): ClaimedMessage => ({
          id: Number(r.id),
          batch: false,
          index: 0,
          projectId: r.project_id,
          channel: r.channel,
          idempotencyKey: r.idempotency_key,
          url: r.url,
          headers: r.headers ?? {},
          body: r.body,
          attempts: r.attempts,
        }))
        .sort((a, b) => a.id - b.id)
      for (const r of batches.sort((a, b) => Number(a.id) - Number(b.id))) {
        const entries = JSON.parse(r.messages) as BatchEntry[]
        entries.forEach(([idempotencyKey, body], index) => {
          claimed.push({ id: Number(r.id), batch: true, index, projectId: r.project_id, channel: r.channel, idempotencyKey, url: r.url, headers: r.headers ?? {}, body, attempts: 0 })
        })
      }
      return claimed
    },
    async settle(outcomes, batches = []) {
      if (outcomes.length === 0 && batches.length === 0) return
      const unsent = batches.flatMap((b) => b.unsent.map((u) => ({ batch: b.id, ...u })))
      await db.query(SETTLE_SQL, [
        outcomes.map((o) => o.id),
        outcomes.map((o) => o.status),
        outcomes.map((o) => o.httpStatus),
        outcomes.map((o) => (o.status === 'sent' ? null : o.error)),
        outcomes.map((o) => (o.status === 'retry' ? o.retryAt.toISOString() : null)),
        batches.map((b) => b.id),
        batches.map((b) => b.httpStatus),
        unsent.map((u) => u.batch),
        unsent.map((u) => u.message.idempotencyKey),
        unsent.map((u) => u.message.body),
        unsent.map((u) => u.status),
        unsent.map((u) => u.attempts),
        unsent.map((u) => u.retryAt.toISOString()),
        unsent.map((u) => u.httpStatus),
        unsent.map((u) => u.error),
      ])
    },
    async extendLeases(ids, batchIds, leaseMs) {
      if (!leases || (ids.length === 0 && batchIds.length === 0)) return
      await db.query(
        `WITH own AS (UPDATE outbox_messages SET locked_until = ${leaseUntil('$3')} WHERE id = ANY($1::bigint[]) AND status = 'pending' RETURNING id)
         UPDATE outbox_batches SET locked_until = ${leaseUntil('$3')} WHERE id = ANY($2::bigint[]) AND status = 'pending'`,
        [[...ids], [...batchIds], leaseMs],
      )
    },
    async postpone(ids, until) {
      if (ids.length === 0) return
      await db.query('UPDATE outbox_messages SET next_attempt_at = $2, locked_until = NULL WHERE id = ANY($1::bigint[])', [ids, until.toISOString()])
    },
    async dropOverBacklog(channel, keep) {
      return db.inTransaction(async (tx) => {
        const over = await tx.query<{ kind: 'own' | 'batch'; id: string; n: number }>(OVER_BACKLOG_SQL, [channel, keep])
        if (over.length === 0) return 0
        const idsOf = (kind: string) => over.filter((r) => r.kind === kind).map((r) => r.id)
        await tx.query(
          `WITH own AS (UPDATE outbox_messages SET status = 'dropped', locked_until = NULL WHERE id = ANY($1::bigint[]) RETURNING id)
           UPDATE outbox_batches SET status = 'dropped', locked_until = NULL WHERE id = ANY($2::bigint[])`,
          [idsOf('own'), idsOf('batch')],
        )
        return over.reduce((n, r) => n + Number(r.n), 0)
      })
    },
    async deleteSettled(before, limit) {
      // Batch rows first (a batch row gone while its own rows stay would list those twice), then
      // own rows; ids grow with created_at: the oldest first, by the primary key.
      const step = (table: string, n: number) =>
        db.query(
          `DELETE FROM ${table} WHERE id IN (
             SELECT id FROM ${table} WHERE status <> 'pending' AND created_at < $1 ORDER BY id LIMIT $2)
           RETURNING id`,
          [before, n],
        )
      const batches = await step('outbox_batches', limit)
      if (batches.length >= limit) return batches.length
      return batches.length + (await step('outbox_messages', limit - batches.length)).length
    },
    async pendingByChannel() {
      const rows = await db.query(
        `SELECT channel, sum(n)::int AS pending, min(oldest) AS oldest FROM (
           SELECT channel, count(*) AS n, min(created_at) AS oldest FROM outbox_messages WHERE status = 'pending' GROUP BY channel
           UNION ALL
           SELECT channel, sum(size), min(created_at) FROM outbox_batches WHERE status = 'pending' GROUP BY channel) pending
         GROUP BY channel`,
      )
      return new Map(rows.map((r): [string, OutboxCounts] => [r.channel, { pending: r.pending, oldestPendingAt: r.oldest ? new Date(r.oldest) : null }]))
    },
    async recent(projectId, channel, limit) {
      const [own, batched] = await Promise.all([
        db.query(`SELECT * FROM outbox_messages WHERE project_id = $1 AND channel = $2 ORDER BY id DESC LIMIT $3`, [projectId, channel, limit]),
        db.query(RECENT_BATCHED_SQL, [projectId, channel, limit]),
      ])
      // Newest first by queue time (a batch's own rows keep its time), stable within a time.
      return [...own, ...batched]
        .map(toDelivery)
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
        .slice(0, limit)
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
