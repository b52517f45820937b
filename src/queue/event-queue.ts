/** About one delivery of a batch. */
export interface BatchDelivery {
  /** 1 on the first delivery; n when the batch at this position failed n - 1 times in a row. */
  attempt: number
  /**
   * Some message of the batch was delivered before (to this process or another, which may have
   * stored its events and died before acknowledging): the event store must confirm every event of
   * the batch against what is stored, not only those its own recent window holds.
   */
  redelivered?: boolean
}

/**
 * Handles one delivered batch. Resolving acknowledges every message of the batch; throwing (or
 * rejecting) leaves them unacknowledged, and the queue delivers them again, in the same order.
 */
export type BatchHandler = (messages: string[], delivery: BatchDelivery) => Promise<void>

export interface ConsumeOptions {
  /** Largest batch handed to the handler. */
  maxBatch: number
  /** How long to wait for a batch to fill once at least one message is available. */
  maxWaitMs: number
  /**
   * Pause before a batch whose handler failed is delivered again; it doubles on each further
   * failure in a row, up to `retryMaxDelayMs`. New publishes do not cut it short.
   */
  retryDelayMs?: number
  retryMaxDelayMs?: number
}

/** Whether the queue can take publishes: false after a failed write until a write or a probe succeeds. */
export interface QueueWriteState {
  writable: boolean
  /** Why not (the failed write's error), else null. */
  reason: string | null
  /** ISO time of the first failure of this streak, else null. */
  since: string | null
}

export interface EventQueueStats {
  /** Messages made durable since open. */
  published: number
  /** Group commits (write + fsync) since open: usually far fewer than publish calls. */
  flushes: number
  /** Messages acknowledged by the consumer since open. */
  acked: number
  /** Handler failures (each one means a redelivery). */
  failedBatches: number
}

/** What was published but not yet acknowledged: exact across restarts (computed from log positions). */
export interface QueueBacklog {
  /** Messages made durable and not acknowledged. */
  events: number
  /** Their bytes in the log (the records, each with its '\n'). */
  bytes: number
  /**
   * Milliseconds since the oldest unacknowledged message was made durable (0 when there is none).
   * The file queue keeps the time of each flush; for messages written before it was opened it uses
   * their segment file's mtime (the time of that segment's last write), so there it may read low.
   */
  oldestAgeMs: number
}

/**
 * The queue between capture and the ingestion workers: accepted-but-unprocessed events
 * (in-process segment log embedded, NATS JetStream at scale).
 *
 * Invariants every adapter keeps (checked by `test/contracts/event-queue.contract.ts`):
 * - `publish` resolves only once the messages are durable: a crash after that loses none of them;
 * - messages are delivered in publish order, in batches of at most `maxBatch`;
 * - delivery is at-least-once: a batch whose handler fails, and every message not acknowledged
 *   before a crash or close, is delivered again (consumers must be idempotent);
 * - a message is one line of text: it never contains '\n'.
 */
export interface EventQueue {
  /**
   * Resolves once `messages` are durable. Rejects with `QueueFullError` (nothing written) while
   * the backlog is at its limit, with `MessageTooLargeError` (nothing written) when one message is
   * larger than the queue can ever hold, with another error when the write failed (nothing kept either).
   */
  publish(messages: string[]): Promise<void>
  /** Starts the (single) consumer. */
  consume(handler: BatchHandler, opts: ConsumeOptions): void
  /**
   * Resolves once every message published so far has been acknowledged, or after `timeoutMs`;
   * returns whether the queue was fully drained.
   */
  drain(timeoutMs: number): Promise<boolean>
  stats(): EventQueueStats
  /** Published-but-unacknowledged figures; cheap (read on every metrics scrape). */
  backlog(): QueueBacklog
  /** Whether publishes can be written now (read by `/_ready`). */
  writeState(): QueueWriteState
  /** Refuses new publishes, waits for pending flushes and the in-flight batch, and closes. */
  close(): Promise<void>
}

/**
 * Publish refused because the unacknowledged backlog would pass the queue's limit: nothing of it
 * was written. The worker has fallen behind; capture answers 503 with Retry-After until it catches up.
 */
export class QueueFullError extends Error {
  constructor(
    readonly backlogBytes: number,
    readonly limitBytes: number,
  ) {
    super(`event queue backlog is full: ${backlogBytes} bytes unprocessed, limit ${limitBytes}`)
    this.name = 'QueueFullError'
  }
}

/**
 * Publish refused because one message is larger than the queue can ever hold (NATS: the server's
 * `max_payload`); nothing of the publish was written. Retrying cannot help: capture answers 413.
 */
export class MessageTooLargeError extends Error {
  constructor(
    /** The message's size in bytes (UTF-8, with its separator). */
    readonly bytes: number,
    /** The largest message the queue takes, in bytes. */
    readonly limitBytes: number,
  ) {
    super(`a message of ${bytes} bytes is larger than the queue takes (${limitBytes} bytes)`)
    this.name = 'MessageTooLargeError'
  }
}
