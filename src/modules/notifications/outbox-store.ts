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

export interface ClaimedMessage extends OutboxMessage {
  id: number
  /** Tries before this one. */
  attempts: number
}

/** What became of one try: `retry` is due again at `retryAt`; each counts a try. */
export type SendOutcome =
  | { id: number; status: 'sent'; httpStatus: number }
  | { id: number; status: 'retry'; retryAt: Date; httpStatus: number | null; error: string }
  | { id: number; status: 'failed'; httpStatus: number | null; error: string }

export type OutboxStatus = 'pending' | 'sent' | 'failed' | 'dropped'

export interface OutboxDelivery {
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

/**
 * The durable outbox (MetaStore): messages are written in the ingestion pipeline once their events
 * are stored, and sent by the outbox sender. Claims are leases (`FOR UPDATE SKIP LOCKED`), so several
 * worker processes never send one message twice at once; a lease that runs out (a crashed sender)
 * makes the message due again.
 */
export interface OutboxStore {
  /** Adds messages; those whose key is already there are left as they are. Returns how many were new. */
  enqueue(messages: readonly OutboxMessage[]): Promise<number>
  /**
   * Leases due messages for `leaseMs`, oldest first: up to `limit` in all and `perChannel` of any one
   * channel, none of the channels in `skip` (those the sender has enough of in hand) nor the ids in
   * `exclude` (those it has in hand: a store without leases relies on it).
   */
  claimDue(limit: number, leaseMs: number, opts?: { perChannel?: number; skip?: readonly string[]; exclude?: readonly number[] }): Promise<ClaimedMessage[]>
  /** Records the outcomes of sends, in one statement: sent, another try at `retryAt`, or dead-lettered. */
  settle(outcomes: readonly SendOutcome[]): Promise<void>
  /** Due again at `until`, its lease released, no try counted (held back by a rate limit, or not sent before a stop). */
  postpone(ids: readonly number[], until: Date): Promise<void>
  /** Marks the oldest pending messages of a channel dropped past `keep` of them; returns how many. */
  dropOverBacklog(channel: string, keep: number): Promise<number>
  /** Pending messages per channel (the backlog). */
  pendingByChannel(): Promise<Map<string, OutboxCounts>>
  /** The latest messages of a channel, newest first. */
  recent(projectId: number, channel: string, limit: number): Promise<OutboxDelivery[]>
  /** Deletes up to `limit` settled messages (sent, failed, dropped) queued before `before`; returns how many. */
  deleteSettled(before: Date, limit: number): Promise<number>
  /** Makes failed (dead-lettered) messages of a project pending again; returns how many. */
  replayFailed(projectId: number, channel: string): Promise<number>
}
