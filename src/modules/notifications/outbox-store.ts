/** One message to send: a POST of `body` to `url`, at least once, keyed by `idempotencyKey`. */
export interface OutboxMessage {
  projectId: number
  /** What sends it: `chat` (actions that notify) or `destination:<id>`; limits and metrics are per channel. */
  channel: string
  /** The same across retries and redeliveries of the batch that produced it; sent as `Idempotency-Key`. */
  idempotencyKey: string
  url: string
  headers: Record<string, string>
  body: string
}

/**
 * A message in hand: a row of its own (a retry, a replay, one left over from a batch; `batch` false),
 * or one of a batch row's messages (`batch` true, `id` the batch row's, `index` its place in it).
 */
export interface ClaimedMessage extends OutboxMessage {
  id: number
  batch: boolean
  index: number
  /** Tries before this one. */
  attempts: number
}

/**
 * A batch row whose messages all have an outcome. It is done; the messages not sent get rows of their
 * own: a retry or one not tried (before a stop, no try counted) due at `retryAt`, or a dead letter.
 */
export interface BatchOutcome {
  id: number
  /** The answer to its last message sent, shown as its sent messages' status. */
  httpStatus: number | null
  unsent: UnsentMessage[]
}

export interface UnsentMessage {
  message: OutboxMessage
  status: 'pending' | 'failed'
  /** Tries so far, this one included. */
  attempts: number
  retryAt: Date
  httpStatus: number | null
  error: string | null
}

/** What became of one try: `retry` is due again at `retryAt`; each counts a try. */
export type SendOutcome =
  | { id: number; status: 'sent'; httpStatus: number }
  | { id: number; status: 'retry'; retryAt: Date; httpStatus: number | null; error: string }
  | { id: number; status: 'failed'; httpStatus: number | null; error: string }

export type OutboxStatus = 'pending' | 'sent' | 'failed' | 'dropped'

export interface OutboxDelivery {
  /** Its row: its own, or (sent or dropped with its batch) its batch row's. */
  id: number
  channel: string
  idempotencyKey: string
  status: OutboxStatus
  attempts: number
  lastStatus: number | null
  lastError: string | null
  createdAt: Date
  sentAt: Date | null
}

export interface OutboxCounts {
  pending: number
  oldestPendingAt: Date | null
}

export interface ClaimOptions {
  /** Messages of any one channel at most (a batch row is taken whole, and only while under it). */
  perChannel?: number
  /** Channels the sender has enough of in hand. */
  skip?: readonly string[]
  /** Rows the sender has in hand, its own and batch rows (a store without leases relies on it). */
  exclude?: readonly number[]
  excludeBatches?: readonly number[]
}

/**
 * The durable outbox (MetaStore): messages are written in the ingestion pipeline once their events
 * are stored, a row per micro-batch and channel, and sent by the outbox sender one by one; a message
 * not sent at its batch's first go gets a row of its own (retries, dead letters, replay). Claims are
 * leases (`FOR UPDATE SKIP LOCKED`), so several worker processes never send one message twice at
 * once; a lease that runs out (a crashed sender) makes the row due again, its batch row's messages all.
 */
export interface OutboxStore {
  /**
   * Adds messages, a batch row per channel, URL and headers; a batch already there (the same keys: a
   * redelivered micro-batch) is left as it is. Returns how many messages were new.
   */
  enqueue(messages: readonly OutboxMessage[]): Promise<number>
  /**
   * Leases due messages for `leaseMs`, oldest first: up to `limit` rows of each kind, none of the
   * channels in `skip` nor the rows in `exclude`/`excludeBatches`. A batch row comes whole, as its messages.
   */
  claimDue(limit: number, leaseMs: number, opts?: ClaimOptions): Promise<ClaimedMessage[]>
  /**
   * Records, in one statement, the outcomes of own rows' sends (sent, another try at `retryAt`, or
   * dead-lettered) and the batch rows done (their unsent messages as rows of their own).
   */
  settle(outcomes: readonly SendOutcome[], batches?: readonly BatchOutcome[]): Promise<void>
  /** Keeps the leases of rows in hand for another `leaseMs` (a store without leases does nothing). */
  extendLeases(ids: readonly number[], batchIds: readonly number[], leaseMs: number): Promise<void>
  /** Own rows due again at `until`, their leases released, no try counted (not sent before a stop). */
  postpone(ids: readonly number[], until: Date): Promise<void>
  /**
   * Marks the oldest pending messages of a channel dropped past `keep` of them (a batch row's all
   * together, so the channel keeps at most `keep`); returns how many.
   */
  dropOverBacklog(channel: string, keep: number): Promise<number>
  /** Pending messages per channel (the backlog). */
  pendingByChannel(): Promise<Map<string, OutboxCounts>>
  /** The latest messages of a channel, newest first. */
  recent(projectId: number, channel: string, limit: number): Promise<OutboxDelivery[]>
  /** Deletes up to `limit` settled rows (sent, failed, dropped; own and batch rows) queued before `before`; returns how many. */
  deleteSettled(before: Date, limit: number): Promise<number>
  /** Makes failed (dead-lettered) messages of a project pending again; returns how many. */
  replayFailed(projectId: number, channel: string): Promise<number>
}
