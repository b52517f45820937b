import type { Consumer, JsMsg } from '@nats-io/jetstream'
import type { BatchHandler, ConsumeOptions } from './event-queue.ts'
import type { QueueLogger } from './segment-writer.ts'
import { crashPoint } from '../shared/crash-points.ts'

/** One JetStream message held by this worker: the events it carries and how many were handled. */
interface Held {
  msg: JsMsg
  lines: string[]
  /** Lines handed to a batch that succeeded. */
  handled: number
  /** Lines handed out (in the batch under way, or handled). */
  taken: number
  /** When its linger ends: -Infinity for messages that must not wait (redelivered, or from before open). */
  due: number
}

export interface NatsConsumerOptions {
  consumer: Consumer
  /** Messages with a stream sequence up to this were in the stream when the queue opened: they do not linger. */
  openSeq: number
  /** The consumer's ack wait: held messages are marked "in progress" well within it. */
  ackWaitMs: number
  logger?: QueueLogger
  /** Called with the number of events once their message has been acknowledged. */
  onAck?: (events: number) => void
}

/** Most JetStream messages held (fetched, not yet acknowledged) by one worker at once. */
const MAX_HELD_MESSAGES = 256
/** A fetch request lives this long on the server (JetStream's minimum is 1 s). */
const FETCH_EXPIRES_MS = 2000
/** When the stream says more messages are waiting, a batch waits this long for them to arrive. */
const BEHIND_WAIT_MS = 100

/**
 * The worker side of the JetStream queue: pulls messages from the durable consumer, splits each into
 * its events, and hands them to the handler in batches of at most `maxBatch`, lingering like the
 * file queue (a batch goes out once full, or once its first event has waited `maxWaitMs`; messages
 * delivered again, from before the open, or with more waiting behind them, do not wait). A message is
 * acknowledged once every event in it was handled; a failed batch is retried here, in order, with
 * a doubling pause, while the held messages are kept "in progress" so that JetStream does not hand
 * them to another worker. A crashed worker's messages come back after the ack wait (with the
 * consumer's backoff); the event store drops events it already has (by uuid).
 */
export class NatsConsumer {
  acked = 0
  failedBatches = 0
  private readonly held: Held[] = []
  private stopping = false
  private draining = 0
  private wakeUp: (() => void) | null = null
  private wakeRoom: (() => void) | null = null
  private wakeBackoff: (() => void) | null = null
  private fetchIter: { stop(err?: Error): void } | null = null
  private loops: Promise<void> | null = null
  private heartbeat: NodeJS.Timeout | null = null
  private acksInFlight = 0
  /** The stream says messages are waiting beyond the last one fetched. */
  private behind = false

  constructor(private readonly opts: NatsConsumerOptions) {}

  /** Whether this worker holds nothing unacknowledged. */
  idle(): boolean {
    return this.held.length === 0 && this.acksInFlight === 0
  }

  start(handler: BatchHandler, o: ConsumeOptions): void {
    if (this.loops) throw new Error('event queue already has a consumer')
    this.heartbeat = setInterval(() => {
      for (const h of this.held) h.msg.working()
    }, Math.max(100, Math.floor(this.opts.ackWaitMs / 3)))
    this.heartbeat.unref()
    this.loops = Promise.all([this.fetchLoop(o.maxBatch), this.batchLoop(handler, o)]).then(() => undefined)
  }

  /** While a drain is under way no batch lingers; `done()` ends that. */
  beginDrain(): () => void {
    this.draining++
    this.wake()
    return () => {
      this.draining--
    }
  }

  /** Stops after the batch under way; what is held and unacknowledged goes back to JetStream at once. */
  async stop(): Promise<void> {
    this.stopping = true
    this.fetchIter?.stop()
    this.wake()
    this.wakeRoom?.()
    this.wakeBackoff?.()
    await this.loops
    if (this.heartbeat) clearInterval(this.heartbeat)
    for (const h of this.held.splice(0)) h.msg.nak()
  }

  private wake(): void {
    const w = this.wakeUp
    this.wakeUp = null
    w?.()
  }

  private unhandledLines(): number {
    let n = 0
    for (const h of this.held) n += h.lines.length - h.taken
    return n
  }

  private async fetchLoop(maxBatch: number): Promise<void> {
    let failures = 0
    while (!this.stopping) {
      const room = MAX_HELD_MESSAGES - this.held.length
      if (room <= 0 || this.unhandledLines() >= 2 * maxBatch) {
        await new Promise<void>((resolve) => (this.wakeRoom = resolve))
        continue
      }
      try {
        const iter = await this.opts.consumer.fetch({ max_messages: room, expires: FETCH_EXPIRES_MS })
        this.fetchIter = iter
        for await (const msg of iter) {
          if (this.stopping) {
            msg.nak()
            continue
          }
          this.hold(msg)
          failures = 0
        }
        this.fetchIter = null
      } catch (err) {
        this.fetchIter = null
        failures++
        this.opts.logger?.warn({ err: String(err), failures }, 'event queue: fetching from JetStream failed; retrying')
        await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** Math.min(failures, 6))))
      }
    }
  }

  private hold(msg: JsMsg): void {
    const lines = msg.string().split('\n')
    const old = msg.info.deliveryCount > 1 || msg.seq <= this.opts.openSeq
    this.held.push({ msg, lines, handled: 0, taken: 0, due: old ? -Infinity : performance.now() })
    this.behind = msg.info.pending > 0
    this.wake()
  }

  private async waitForData(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    await new Promise<void>((resolve) => {
      this.wakeUp = resolve
      if (Number.isFinite(ms)) timer = setTimeout(resolve, ms)
    })
    clearTimeout(timer)
    this.wakeUp = null
  }

  private async batchLoop(handler: BatchHandler, o: ConsumeOptions): Promise<void> {
    const minDelay = o.retryDelayMs ?? 1000
    const maxDelay = Math.max(minDelay, o.retryMaxDelayMs ?? 30_000)
    while (!this.stopping) {
      if (this.unhandledLines() === 0) {
        await this.waitForData(Infinity)
        continue
      }
      await this.linger(o.maxBatch, o.maxWaitMs)
      if (this.stopping) break
      const { lines, parts, redelivered } = this.take(o.maxBatch)
      crashPoint('worker.batch-received')
      let failures = 0
      for (;;) {
        try {
          await handler(lines, { attempt: failures + 1, redelivered })
          break
        } catch (err) {
          failures++
          this.failedBatches++
          this.opts.logger?.debug({ err, failures }, 'event batch failed; it will be delivered again')
          if (this.stopping) return
          await this.backoff(Math.min(maxDelay, minDelay * 2 ** Math.min(failures - 1, 30)))
          if (this.stopping) return
        }
      }
      crashPoint('worker.before-ack')
      for (const [h, n] of parts) h.handled += n
      await this.ackHandled()
      crashPoint('worker.after-ack')
      this.wakeRoom?.()
    }
  }

  /** Waits until `maxBatch` events are held or the first unhandled one has waited `maxWaitMs`. */
  private async linger(maxBatch: number, maxWaitMs: number): Promise<void> {
    const first = this.held.find((h) => h.taken < h.lines.length)!
    const deadline = first.due + maxWaitMs
    for (;;) {
      if (this.stopping || this.draining > 0) return
      const ready = this.unhandledLines()
      if (ready >= maxBatch) return
      const now = performance.now()
      if (this.behind && this.held.length < MAX_HELD_MESSAGES) {
        // More is already waiting in the stream: let the fetch bring it rather than hand out a small batch.
        const before = ready
        await this.waitForData(BEHIND_WAIT_MS)
        if (this.unhandledLines() === before) this.behind = false
        continue
      }
      if (now >= deadline) return
      await this.waitForData(Math.max(1, deadline - now))
    }
  }

  private take(maxBatch: number): { lines: string[]; parts: [Held, number][]; redelivered: boolean } {
    const lines: string[] = []
    const parts: [Held, number][] = []
    let redelivered = false
    for (const h of this.held) {
      if (lines.length >= maxBatch) break
      const n = Math.min(h.lines.length - h.taken, maxBatch - lines.length)
      if (n <= 0) continue
      for (let i = h.taken; i < h.taken + n; i++) lines.push(h.lines[i]!)
      h.taken += n
      parts.push([h, n])
      if (h.msg.info.deliveryCount > 1) redelivered = true
    }
    return { lines, parts, redelivered }
  }

  /** Acknowledges (and forgets) the leading messages whose events were all handled. */
  private async ackHandled(): Promise<void> {
    const done: Held[] = []
    while (this.held.length > 0 && this.held[0]!.handled === this.held[0]!.lines.length) done.push(this.held.shift()!)
    if (done.length === 0) return
    this.acksInFlight++
    try {
      await Promise.all(
        done.map(async (h) => {
          try {
            await h.msg.ackAck()
          } catch (err) {
            // Delivered again after the ack wait; the event store drops what it already has.
            this.opts.logger?.warn({ err: String(err), seq: h.msg.seq }, 'event queue: acknowledgement not confirmed; the message may be delivered again')
          }
          this.acked += h.lines.length
          this.opts.onAck?.(h.lines.length)
        }),
      )
    } finally {
      this.acksInFlight--
    }
  }

  private async backoff(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    await new Promise<void>((resolve) => {
      this.wakeBackoff = resolve
      timer = setTimeout(resolve, ms)
    })
    clearTimeout(timer)
    this.wakeBackoff = null
  }
}
