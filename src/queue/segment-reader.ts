import { open, unlink, type FileHandle } from 'node:fs/promises'
import type { BatchHandler, ConsumeOptions } from './event-queue.ts'
import { MessageTail } from './message-tail.ts'
import { comparePositions, readRecords, segmentPath, type LogPosition } from './segment-log.ts'
import type { FlushedGroup, QueueLogger } from './segment-writer.ts'
import { crashPoint } from '../shared/crash-points.ts'

/** What the reader needs of the writer: how far the log is durable, and the sealed segments' sizes. */
export interface DurableLog {
  durable(): LogPosition
  /** The reader removes the segments it has deleted. */
  readonly sealed: Map<number, number>
}

export interface SegmentReaderOptions {
  dir: string
  log: DurableLog
  /** The acknowledged position found on open: delivery starts there. */
  ack: LogPosition
  /** Records the acknowledged position (segment-log's `openAckWriter`). */
  ackWriter: { write(pos: LogPosition): Promise<void> }
  /** Byte budget of the in-memory tail of just-flushed messages (0: always read the files). */
  maxTailBytes: number
  logger?: QueueLogger
  /** Called when `count` messages up to `ack` were acknowledged. */
  onAck?: (count: number, ack: LogPosition) => void
}

const READ_CHUNK_BYTES = 4 * 1024 * 1024

type Batch = { messages: string[]; end: LogPosition }

/**
 * The consumer side of the segment log. It hands out what was just made durable from memory (the
 * tail), or reads the segment files when it has fallen behind the tail, after a restart or after a
 * failed batch; in batches of at most `maxBatch`. A batch is handed out once it is full or its oldest
 * message has waited `maxWaitMs` since it became durable (the linger: every batch costs its handler a
 * fixed amount, which at low rates is most of the cost); messages delivered again, and a reader
 * already behind, do not wait. A failed batch is delivered again from the acknowledged position
 * after a backoff, with its attempt number. Acknowledging records the position and deletes the
 * segments wholly before it.
 */
export class SegmentReader {
  acked = 0
  failedBatches = 0
  private ackPos: LogPosition
  private read: LogPosition
  private readFd: { seg: number; fd: FileHandle } | null = null
  /** Records read from a file and not yet handed out, with the end position of each. */
  private carry: { records: string[]; ends: LogPosition[] } = { records: [], ends: [] }
  private readonly tail: MessageTail
  private wakeUp: (() => void) | null = null
  /** A wake came while no wait was under way (the consumer was reading or counting). */
  private woken = false
  /** Ends the backoff pause after a failed batch (only stopping does, not new data). */
  private wakeBackoff: (() => void) | null = null
  private stopping = false
  /**
   * When the oldest unread message became durable: null when nothing is unread, -Infinity for
   * messages delivered again (after a failed batch or a restart), which do not wait.
   */
  private unreadSince: number | null
  /** drain() calls under way: no batch lingers meanwhile. */
  private draining = 0
  private consumerDone: Promise<void> | null = null
  private readonly drainWaiters = new Set<() => void>()

  constructor(private readonly opts: SegmentReaderOptions) {
    this.ackPos = opts.ack
    this.read = { ...opts.ack }
    this.unreadSince = comparePositions(opts.ack, opts.log.durable()) < 0 ? -Infinity : null
    this.tail = new MessageTail(opts.maxTailBytes)
  }

  /** The acknowledged position: every message before it was handled. */
  ack(): LogPosition {
    return this.ackPos
  }

  /** Whether every durable message has been acknowledged. */
  caughtUp(): boolean {
    return comparePositions(this.ackPos, this.opts.log.durable()) >= 0
  }

  /** The writer's `onWritten`: keeps the group in the tail while the tail is live. */
  written(group: FlushedGroup): void {
    const { tail, carry } = this
    if (!tail.live && carry.records.length === 0 && tail.count === 0 && comparePositions(this.read, this.opts.log.durable()) === 0) {
      tail.live = true
    }
    tail.append(group)
  }

  /** The writer's `onDurable`: wakes a consumer waiting for data. */
  notify(): void {
    this.unreadSince ??= performance.now()
    this.wake()
  }

  /** Ends a wait for data (or a linger) early; with none under way, the next wait returns at once. */
  private wake(): void {
    const w = this.wakeUp
    this.wakeUp = null
    if (w) w()
    else this.woken = true
  }

  consume(handler: BatchHandler, o: ConsumeOptions): void {
    if (this.consumerDone) throw new Error('event queue already has a consumer')
    this.consumerDone = this.consumeLoop(handler, o)
  }

  /** Resolves true once caught up, or false after `timeoutMs`. */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.caughtUp()) return true
    let done!: () => void
    const drained = new Promise<boolean>((resolve) => (done = () => resolve(true)))
    this.drainWaiters.add(done)
    this.draining++
    this.wake()
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))
    const ok = await Promise.race([drained, timeout])
    clearTimeout(timer)
    this.drainWaiters.delete(done)
    this.draining--
    return ok
  }

  /** Stops the consumer after its in-flight batch and closes the open segment. */
  async stop(): Promise<void> {
    this.stopping = true
    this.wake()
    this.wakeBackoff?.()
    await this.consumerDone
    await this.readFd?.fd.close()
    this.readFd = null
  }

  private async consumeLoop(handler: BatchHandler, o: ConsumeOptions): Promise<void> {
    const minDelay = o.retryDelayMs ?? 1000
    const maxDelay = Math.max(minDelay, o.retryMaxDelayMs ?? 30_000)
    // Failed deliveries in a row of the batch at the acknowledged position.
    let failures = 0
    while (!this.stopping) {
      let batch: Batch | null
      try {
        batch = await this.nextBatch(o.maxBatch, o.maxWaitMs)
        if (!batch) continue
        crashPoint('worker.batch-received')
        await handler(batch.messages, { attempt: failures + 1 })
      } catch (err) {
        // The handler failed (or reading the segment did): start again from the acknowledged
        // position after a backoff that doubles per failure in a row.
        failures++
        this.failedBatches++
        this.opts.logger?.debug({ err, failures }, 'event batch failed; it will be delivered again')
        await this.rewind()
        if (!this.stopping) await this.backoff(Math.min(maxDelay, minDelay * 2 ** Math.min(failures - 1, 30)))
        continue
      }
      failures = 0
      crashPoint('worker.before-ack')
      try {
        await this.acknowledge(batch.end, batch.messages.length)
      } catch (err) {
        // The events are stored; a lost ack position only means they are delivered again (deduped).
        this.opts.logger?.warn({ err }, 'event queue could not record the acknowledged position')
      }
      crashPoint('worker.after-ack')
    }
  }

  /** Back to the acknowledged position, reading from the files. */
  private async rewind(): Promise<void> {
    this.read = { ...this.ackPos }
    this.unreadSince = -Infinity
    this.carry = { records: [], ends: [] }
    this.tail.drop()
    if (this.readFd) {
      await this.readFd.fd.close().catch(() => undefined)
      this.readFd = null
    }
  }

  private hasUnread(): boolean {
    return this.carry.records.length > 0 || comparePositions(this.read, this.opts.log.durable()) < 0
  }

  private async nextBatch(maxBatch: number, maxWaitMs: number): Promise<Batch | null> {
    while (!this.hasUnread()) {
      if (this.stopping) return null
      await this.waitForData()
    }
    await this.linger(maxBatch, maxWaitMs)
    const batch = await this.take(maxBatch)
    if (!this.hasUnread()) this.unreadSince = null
    return batch
  }

  /** Waits until `maxBatch` messages are ready or the oldest unread one has waited `maxWaitMs`. */
  private async linger(maxBatch: number, maxWaitMs: number): Promise<void> {
    const deadline = (this.unreadSince ?? -Infinity) + maxWaitMs
    while (!this.stopping && this.draining === 0 && performance.now() < deadline && (await this.ready(maxBatch)) < maxBatch) {
      await this.waitForData(Math.max(1, deadline - performance.now()))
    }
  }

  /** How many messages (up to `maxBatch`) could be handed out now: the tail's, or what the files hold. */
  private async ready(maxBatch: number): Promise<number> {
    if (this.tail.live) return this.tail.count
    await this.fillCarryUpTo(maxBatch)
    return this.carry.records.length
  }

  private async take(maxBatch: number): Promise<Batch | null> {
    const { tail } = this
    if (tail.live && tail.count > 0) {
      const batch = tail.take(maxBatch, this.read)
      this.read = batch.end
      return batch
    }
    await this.fillCarryUpTo(maxBatch)
    const n = Math.min(maxBatch, this.carry.records.length)
    if (n === 0) return null
    const messages = this.carry.records.splice(0, n)
    const ends = this.carry.ends.splice(0, n)
    return { messages, end: ends[n - 1]! }
  }

  /** Reads the files until `maxBatch` records are carried or nothing durable is left unread. */
  private async fillCarryUpTo(maxBatch: number): Promise<void> {
    while (this.carry.records.length < maxBatch && comparePositions(this.read, this.opts.log.durable()) < 0) {
      const before = this.carry.records.length
      await this.fillCarry()
      if (this.carry.records.length === before && comparePositions(this.read, this.opts.log.durable()) >= 0) break
    }
  }

  /** Reads the next records of the current segment (moving to the next one when it is done). */
  private async fillCarry(): Promise<void> {
    const { sealed } = this.opts.log
    const durable = this.opts.log.durable()
    if (this.read.seg < durable.seg && this.read.off >= (sealed.get(this.read.seg) ?? 0)) {
      this.read = { seg: this.read.seg + 1, off: 0 }
    }
    const seg = this.read.seg
    const limit = seg === durable.seg ? durable.off : (sealed.get(seg) ?? 0)
    if (this.read.off >= limit) return
    if (this.readFd?.seg !== seg) {
      await this.readFd?.fd.close()
      this.readFd = { seg, fd: await open(segmentPath(this.opts.dir, seg), 'r') }
    }
    const { records, ends } = await readRecords(this.readFd.fd, this.read.off, limit, READ_CHUNK_BYTES)
    for (let i = 0; i < records.length; i++) {
      this.carry.records.push(records[i]!)
      this.carry.ends.push({ seg, off: ends[i]! })
    }
    if (ends.length > 0) this.read = { seg, off: ends[ends.length - 1]! }
  }

  private async acknowledge(end: LogPosition, count: number): Promise<void> {
    this.ackPos = end
    this.acked += count
    this.opts.onAck?.(count, end)
    crashPoint('queue.ack.before-write')
    await this.opts.ackWriter.write(end)
    crashPoint('queue.ack.after-write')
    const { sealed } = this.opts.log
    for (const s of [...sealed.keys()]) {
      if (s < end.seg) {
        sealed.delete(s)
        crashPoint('queue.segment.before-delete')
        await unlink(segmentPath(this.opts.dir, s)).catch(() => undefined)
        crashPoint('queue.segment.after-delete')
      }
    }
    if (this.caughtUp()) for (const d of this.drainWaiters) d()
  }

  private waitForData(ms?: number): Promise<void> {
    if (this.woken) {
      this.woken = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const wake = () => {
        if (timer) clearTimeout(timer)
        resolve()
      }
      // A wait that timed out gives up its wake-up, so a later wake is kept for the next wait.
      const timer = ms === undefined ? null : setTimeout(() => {
        if (this.wakeUp === wake) this.wakeUp = null
        resolve()
      }, ms)
      this.wakeUp = wake
    })
  }

  /** A pause that new publishes do not cut short (only stopping does). */
  private backoff(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      const self = this
      function done() {
        clearTimeout(timer)
        self.wakeBackoff = null
        resolve()
      }
      this.wakeBackoff = done
    })
  }
}
