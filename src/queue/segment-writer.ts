import { open, unlink, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from 'pino'
import type { QueueWriteState } from './event-queue.ts'
import { segmentPath, syncDir, writeFully, type LogPosition, type RecoveredLog } from './segment-log.ts'
import { crashPoint, unsafeAckBeforeFsync } from '../shared/crash-points.ts'

export type QueueLogger = Pick<Logger, 'warn' | 'error' | 'debug'>

/** The messages of one flush (one group commit), as written: where they sit in the log. */
export interface FlushedGroup {
  /** One entry per publish call of the group. */
  messages: string[][]
  seg: number
  /** Byte offset in `seg` of the group's first message. */
  start: number
  /** End offset of each publish's messages, relative to `start`. */
  ends: number[]
  bytes: number
}

export interface SegmentWriterOptions {
  dir: string
  /** The log as recovered on open: the writer takes over its write segment and sealed sizes. */
  log: RecoveredLog
  /** A new segment file is started once the current one would pass this size. */
  segmentBytes: number
  logger?: QueueLogger
  /** Backoff of the disk probe after a failed write (doubling from min to max). */
  probeMinMs?: number
  probeMaxMs?: number
  /** Called after a group's fsync, before the durable position moves past it (the reader's tail). */
  onWritten?: (group: FlushedGroup) => void
  /** Called once the group's publishers have been answered and the durable position moved. */
  onDurable?: () => void
}

const SCRATCH_KEEP_BYTES = 64 * 1024 * 1024
const PROBE_MAX_BYTES = 1024 * 1024
const PROBE_FILE = 'write-probe.tmp'

type Waiter = { resolve: () => void; reject: (err: unknown) => void }

/**
 * The producer side of the segment log: group commit. Every `publish` that arrives while a flush
 * is running joins the next one: one write and one fdatasync serve all of them, and each caller's
 * promise resolves after that fsync. A failed write is cut off again (truncate) so the log stays a
 * sequence of whole records; until a write or a disk probe succeeds, `writeState()` says why not.
 */
export class SegmentWriter {
  /** Sizes of the complete segments before the write segment (the reader drops acknowledged ones). */
  readonly sealed: Map<number, number>
  /** Messages made durable and group commits since open. */
  published = 0
  flushes = 0
  private seg: number
  private fd: FileHandle
  private off: number
  /** End of the last fsync'd write (lags seg/off while a write into a new segment is under way). */
  private durablePos: LogPosition
  /** The messages of each publish waiting for the next flush (written one by one, never joined). */
  private pendingMessages: string[][] = []
  private pendingCount = 0
  private waiters: Waiter[] = []
  private scratch = Buffer.allocUnsafe(1024 * 1024)
  /** The running flush loop (or probe), null when idle. */
  private flushing: Promise<void> | null = null
  private closed = false
  /** Set when a failed write could not be undone: no write goes in until a truncate succeeds. */
  private broken: Error | null = null
  /** The current streak of failed writes (null: writable). */
  private failure: { reason: string; since: Date; bytes: number; failures: number } | null = null
  private probeTimer: NodeJS.Timeout | null = null
  private probeDelay: number

  constructor(private readonly opts: SegmentWriterOptions) {
    this.sealed = opts.log.sealed
    this.seg = opts.log.writeSeg
    this.fd = opts.log.writeFd
    this.off = opts.log.writeOff
    this.durablePos = { seg: this.seg, off: this.off }
    this.probeDelay = opts.probeMinMs ?? 250
  }

  /** End of the last fsync'd write: everything before it is durable. */
  durable(): LogPosition {
    return this.durablePos
  }

  /** Resolves once `messages` are durable (rejects when their write failed or the writer is closed). */
  publish(messages: string[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('event queue is closed'))
    if (messages.length === 0) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      this.pendingMessages.push(messages.slice())
      this.pendingCount += messages.length
      this.waiters.push({ resolve, reject })
      // setImmediate lets every request parsed in this turn of the event loop join the flush.
      this.flushing ??= new Promise<void>((r) => setImmediate(r)).then(() => this.flushLoop())
    })
  }

  /** Resolves when no flush (or probe) is running. */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing
  }

  writeState(): QueueWriteState {
    const f = this.failure
    return f ? { writable: false, reason: f.reason, since: f.since.toISOString() } : { writable: true, reason: null, since: null }
  }

  /** Refuses new publishes, waits for the pending flushes; `closeFile` then closes the segment. */
  async stop(): Promise<void> {
    this.closed = true
    if (this.probeTimer) clearTimeout(this.probeTimer)
    await this.idle()
  }

  closeFile(): Promise<void> {
    return this.fd.close()
  }

  private async flushLoop(): Promise<void> {
    while (this.pendingMessages.length > 0) {
      const chunkMessages = this.pendingMessages
      const count = this.pendingCount
      const ws = this.waiters
      this.pendingMessages = []
      this.pendingCount = 0
      this.waiters = []
      let bytes = 0
      try {
        if (this.broken) await this.repair()
        const { bytes: n, ends } = this.encodeChunks(chunkMessages)
        bytes = n
        if (this.off > 0 && this.off + bytes > this.opts.segmentBytes) await this.rotate()
        if (unsafeAckBeforeFsync()) await answerEarly(ws)
        crashPoint('queue.flush.before-write')
        await writeFully(this.fd, this.scratch.subarray(0, bytes), this.off)
        crashPoint('queue.flush.after-write')
        await this.fd.datasync()
        crashPoint('queue.flush.after-datasync')
        if (this.scratch.length > SCRATCH_KEEP_BYTES) this.scratch = Buffer.allocUnsafe(1024 * 1024)
        this.opts.onWritten?.({ messages: chunkMessages, seg: this.seg, start: this.off, ends, bytes })
        this.off += bytes
        this.durablePos = { seg: this.seg, off: this.off }
        this.published += count
        this.flushes++
        for (const w of ws) w.resolve()
        crashPoint('queue.flush.after-resolve')
        this.writeSucceeded()
        this.opts.onDurable?.()
      } catch (err) {
        if (err !== this.broken) await this.undoPartialWrite()
        this.writeFailed(err, bytes)
        for (const w of ws) w.reject(err)
      }
    }
    this.flushing = null
  }

  /** Cuts a failed write off the segment so the log stays a sequence of whole records. */
  private async undoPartialWrite(): Promise<void> {
    await this.fd.truncate(this.off).catch((truncErr: unknown) => {
      this.broken = new Error(`event queue cannot write until a failed write is undone: ${describe(truncErr)}`, { cause: truncErr })
    })
  }

  /** Cuts the remains of a failed write off the segment; clears `broken` when that works, else throws it. */
  private async repair(): Promise<void> {
    try {
      await this.fd.truncate(this.off)
      await this.fd.datasync()
      this.broken = null
    } catch {
      throw this.broken!
    }
  }

  private writeFailed(err: unknown, bytes: number): void {
    const reason = describe(this.broken ?? err)
    const log = this.opts.logger
    if (this.failure) {
      this.failure.failures++
      this.failure.reason = reason
      this.failure.bytes = Math.max(bytes, 1)
      log?.debug({ err }, 'event queue write failed again')
    } else {
      this.failure = { reason, since: new Date(), bytes: Math.max(bytes, 1), failures: 1 }
      log?.error({ err, broken: this.broken !== null }, 'event queue cannot write: capture answers 503 until it can')
    }
    this.scheduleProbe()
  }

  private writeSucceeded(): void {
    if (!this.failure) return
    const f = this.failure
    this.failure = null
    this.probeDelay = this.opts.probeMinMs ?? 250
    if (this.probeTimer) clearTimeout(this.probeTimer)
    this.probeTimer = null
    this.opts.logger?.warn({ blockedMs: Date.now() - f.since.getTime(), failures: f.failures, reason: f.reason }, 'event queue writes again')
  }

  /**
   * While writes fail and nobody publishes, checks now and then whether the disk takes a write as
   * large as the one that failed (at most 1 MiB, to a scratch file, fsync'd and deleted), after
   * undoing the failed write if that was not possible before. Serialised with the flushes.
   */
  private scheduleProbe(): void {
    if (this.probeTimer || this.closed) return
    const delay = this.probeDelay
    this.probeDelay = Math.min(this.probeDelay * 2, this.opts.probeMaxMs ?? 5000)
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null
      if (!this.failure || this.closed) return
      if (this.flushing) return this.scheduleProbe()
      this.flushing = this.probe().then(() => this.flushLoop())
    }, delay)
    this.probeTimer.unref()
  }

  private async probe(): Promise<void> {
    const file = path.join(this.opts.dir, PROBE_FILE)
    try {
      if (this.broken) await this.repair()
      const fd = await open(file, 'w')
      try {
        await writeFully(fd, Buffer.alloc(Math.min(this.failure?.bytes ?? 1, PROBE_MAX_BYTES)), 0)
        await fd.datasync()
      } finally {
        await fd.close()
        await unlink(file).catch(() => undefined)
      }
      this.writeSucceeded()
    } catch (err) {
      await unlink(file).catch(() => undefined)
      if (this.failure) this.failure.failures++
      this.opts.logger?.debug({ err }, 'event queue write probe failed')
      this.scheduleProbe()
    }
  }

  /**
   * UTF-8 of each publish's messages, each followed by a newline, one after the other into
   * `scratch`; the end offset of each publish. Written message by message: joining them first
   * made one more copy of every request's events (a string as large as the request) to collect.
   */
  private encodeChunks(chunks: string[][]): { bytes: number; ends: number[] } {
    let need = 0
    for (const c of chunks) for (const m of c) need += 3 * m.length + 1
    if (need > this.scratch.length) this.scratch = Buffer.allocUnsafe(need)
    const scratch = this.scratch
    const ends: number[] = new Array(chunks.length)
    let off = 0
    for (let i = 0; i < chunks.length; i++) {
      for (const m of chunks[i]!) {
        off += scratch.write(m, off, 'utf8')
        scratch[off++] = 0x0a
      }
      ends[i] = off
    }
    return { bytes: off, ends }
  }

  private async rotate(): Promise<void> {
    // The new segment is opened first: if that fails (no space for the file), the current one
    // stays the write segment and a later flush tries again.
    const { dir } = this.opts
    crashPoint('queue.rotate.before-open')
    const next = await open(segmentPath(dir, this.seg + 1), 'w+')
    try {
      await syncDir(dir)
    } catch (err) {
      await next.close()
      await unlink(segmentPath(dir, this.seg + 1)).catch(() => undefined)
      throw err
    }
    const old = this.fd
    this.sealed.set(this.seg, this.off)
    this.seg++
    this.off = 0
    this.fd = next
    crashPoint('queue.rotate.after-open')
    await old.close().catch(() => undefined)
  }
}

/**
 * The deliberately broken queue of the kill -9 matrix (TALLY_UNSAFE_ACK_BEFORE_FSYNC, test-only):
 * answers the publishers, and lets their 200s go out, before their messages are written.
 */
async function answerEarly(ws: Waiter[]): Promise<void> {
  for (const w of ws) w.resolve()
  await new Promise((r) => setImmediate(r))
}

function describe(err: unknown): string {
  const o = (err ?? {}) as { code?: unknown; message?: unknown }
  const message = (typeof o.message === 'string' ? o.message : String(err)).split('\n')[0]!
  return typeof o.code === 'string' && !message.includes(o.code) ? `${o.code}: ${message}` : message
}
