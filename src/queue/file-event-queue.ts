import { open, unlink, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from 'pino'
import type { BatchHandler, ConsumeOptions, EventQueue, EventQueueStats, QueueWriteState } from './event-queue.ts'
import {
  comparePositions,
  openAckWriter,
  readRecords,
  recoverLog,
  segmentPath,
  syncDir,
  type LogPosition,
} from './segment-log.ts'
import { crashPoint, unsafeAckBeforeFsync } from '../shared/crash-points.ts'

export interface FileEventQueueOptions {
  dir: string
  /** A new segment file is started once the current one would pass this size. */
  segmentBytes?: number
  /**
   * Bytes of just-flushed messages kept in memory for the consumer, so it need not read back what
   * was just written (default 64 MiB). Past it, or after a failed batch, the consumer reads the
   * segment files until it has caught up.
   */
  maxTailBytes?: number
  /** The composition root passes `logger.child({ module: 'queue' })`. */
  logger?: Pick<Logger, 'warn' | 'error' | 'debug'>
  /**
   * After a failed write, while nobody publishes, the queue probes the disk on this backoff
   * (doubling from min to max) so that its write state comes back without traffic (250 ms, 5 s).
   */
  probeMinMs?: number
  probeMaxMs?: number
}

const READ_CHUNK_BYTES = 4 * 1024 * 1024
const SCRATCH_KEEP_BYTES = 64 * 1024 * 1024
const PROBE_MAX_BYTES = 1024 * 1024
const PROBE_FILE = 'write-probe.tmp'

/** The messages of one publish, as flushed: where they sit in the log. */
interface TailChunk {
  messages: string[]
  /** Index of the first message not yet handed out. */
  next: number
  seg: number
  /** Byte offset of messages[next] in segment `seg`. */
  start: number
  end: number
}

/**
 * The embedded EventQueue: an append-only segment log on local disk with group commit.
 * Every `publish` that arrives while a flush is running joins the next one: one write and one
 * fdatasync serve all of them, and each caller's promise resolves after that fsync. The consumer
 * gets what was just made durable from memory (the "tail": the same messages, no read-back and no
 * re-decoding), or reads the segment files when it has fallen behind the tail or after a failed
 * batch; it hands messages out in batches and records the acknowledged position. On open,
 * everything after that position is delivered again from the files. Fully acknowledged segments
 * are deleted.
 */
export async function openFileEventQueue(opts: FileEventQueueOptions): Promise<EventQueue> {
  const { dir } = opts
  const segmentBytes = opts.segmentBytes ?? 64 * 1024 * 1024
  const maxTailBytes = opts.maxTailBytes ?? 64 * 1024 * 1024
  const log = await recoverLog(dir)
  const ackWriter = await openAckWriter(dir)
  crashPoint('recover.done')
  const sealed = log.sealed
  let writeSeg = log.writeSeg
  let writeFd = log.writeFd
  let writeOff = log.writeOff
  let durable: LogPosition = { seg: writeSeg, off: writeOff }
  let ack: LogPosition = log.ack
  let read: LogPosition = { ...ack }
  const stats: EventQueueStats = { published: 0, flushes: 0, acked: 0, failedBatches: 0 }

  // --- producer side: group commit -------------------------------------------------------------
  let pending: string[] = []
  let pendingMessages: string[][] = []
  let scratch = Buffer.allocUnsafe(1024 * 1024)
  let pendingCount = 0
  let waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = []
  let flushing: Promise<void> | null = null
  let closed = false
  /** Set when a failed write could not be undone: no write goes in until a truncate succeeds. */
  let broken: Error | null = null
  /** The current streak of failed writes (null: writable). */
  let writeFailure: { reason: string; since: Date; bytes: number; failures: number } | null = null
  let probeTimer: NodeJS.Timeout | null = null
  let probeDelay = opts.probeMinMs ?? 250

  async function flushLoop(): Promise<void> {
    while (pending.length > 0) {
      const chunks = pending
      const chunkMessages = pendingMessages
      const count = pendingCount
      const ws = waiters
      pending = []
      pendingMessages = []
      pendingCount = 0
      waiters = []
      let bytes = 0
      try {
        if (broken) await repair()
        const encoded = encodeChunks(chunks)
        bytes = encoded.bytes
        const ends = encoded.ends
        if (writeOff > 0 && writeOff + bytes > segmentBytes) await rotate()
        if (unsafeAckBeforeFsync()) await answerEarly(ws)
        crashPoint('queue.flush.before-write')
        await writeFully(writeFd, scratch.subarray(0, bytes), writeOff)
        crashPoint('queue.flush.after-write')
        await writeFd.datasync()
        crashPoint('queue.flush.after-datasync')
        if (scratch.length > SCRATCH_KEEP_BYTES) scratch = Buffer.allocUnsafe(1024 * 1024)
        appendToTail(chunkMessages, ends, bytes)
        writeOff += bytes
        durable = { seg: writeSeg, off: writeOff }
        stats.published += count
        stats.flushes++
        for (const w of ws) w.resolve()
        crashPoint('queue.flush.after-resolve')
        writeSucceeded()
        wakeConsumer()
      } catch (err) {
        if (err !== broken) {
          // Undo a partial write so the log stays a sequence of whole records.
          await writeFd.truncate(writeOff).catch((truncErr: unknown) => {
            broken = new Error(`event queue cannot write until a failed write is undone: ${describe(truncErr)}`, { cause: truncErr })
          })
        }
        writeFailed(err, bytes)
        for (const w of ws) w.reject(err)
      }
    }
    flushing = null
  }

  /** Cuts the remains of a failed write off the segment; clears `broken` when that works, else throws it. */
  async function repair(): Promise<void> {
    try {
      await writeFd.truncate(writeOff)
      await writeFd.datasync()
      broken = null
    } catch {
      throw broken!
    }
  }

  function writeFailed(err: unknown, bytes: number): void {
    const reason = describe(broken ?? err)
    if (writeFailure) {
      writeFailure.failures++
      writeFailure.reason = reason
      writeFailure.bytes = Math.max(bytes, 1)
      opts.logger?.debug({ err }, 'event queue write failed again')
    } else {
      writeFailure = { reason, since: new Date(), bytes: Math.max(bytes, 1), failures: 1 }
      opts.logger?.error({ err, broken: broken !== null }, 'event queue cannot write: capture answers 503 until it can')
    }
    scheduleProbe()
  }

  function writeSucceeded(): void {
    if (!writeFailure) return
    const f = writeFailure
    writeFailure = null
    probeDelay = opts.probeMinMs ?? 250
    if (probeTimer) clearTimeout(probeTimer)
    probeTimer = null
    opts.logger?.warn({ blockedMs: Date.now() - f.since.getTime(), failures: f.failures, reason: f.reason }, 'event queue writes again')
  }

  /**
   * While writes fail and nobody publishes, checks now and then whether the disk takes a write as
   * large as the one that failed (at most 1 MiB, to a scratch file, fsync'd and deleted), after
   * undoing the failed write if that was not possible before. Serialised with the flushes.
   */
  function scheduleProbe(): void {
    if (probeTimer || closed) return
    const delay = probeDelay
    probeDelay = Math.min(probeDelay * 2, opts.probeMaxMs ?? 5000)
    probeTimer = setTimeout(() => {
      probeTimer = null
      if (!writeFailure || closed) return
      if (flushing) return scheduleProbe()
      flushing = probe().then(flushLoop)
    }, delay)
    probeTimer.unref()
  }

  async function probe(): Promise<void> {
    const file = path.join(dir, PROBE_FILE)
    try {
      if (broken) await repair()
      const fd = await open(file, 'w')
      try {
        await writeFully(fd, Buffer.alloc(Math.min(writeFailure?.bytes ?? 1, PROBE_MAX_BYTES)), 0)
        await fd.datasync()
      } finally {
        await fd.close()
        await unlink(file).catch(() => undefined)
      }
      writeSucceeded()
    } catch (err) {
      await unlink(file).catch(() => undefined)
      if (writeFailure) writeFailure.failures++
      opts.logger?.debug({ err }, 'event queue write probe failed')
      scheduleProbe()
    }
  }

  /** UTF-8 of the chunks, one after the other, into `scratch`; the end offset of each chunk. */
  function encodeChunks(chunks: string[]): { bytes: number; ends: number[] } {
    let need = 0
    for (const c of chunks) need += 3 * c.length
    if (need > scratch.length) scratch = Buffer.allocUnsafe(need)
    const ends: number[] = new Array(chunks.length)
    let off = 0
    for (let i = 0; i < chunks.length; i++) {
      off += scratch.write(chunks[i]!, off, 'utf8')
      ends[i] = off
    }
    return { bytes: off, ends }
  }

  /**
   * Keeps a flushed group in memory for the consumer while the tail is "live": it holds exactly
   * the durable messages after the read position. Otherwise the consumer reads them from disk.
   */
  function appendToTail(chunkMessages: string[][], ends: number[], bytes: number): void {
    if (!tailLive && carry.records.length === 0 && tailCount === 0 && comparePositions(read, durable) === 0) tailLive = true
    if (!tailLive) return
    if (tailBytes + bytes > maxTailBytes) {
      dropTail()
      return
    }
    let start = writeOff
    for (let i = 0; i < chunkMessages.length; i++) {
      const end = writeOff + ends[i]!
      tail.push({ messages: chunkMessages[i]!, next: 0, seg: writeSeg, start, end })
      tailCount += chunkMessages[i]!.length
      start = end
    }
    tailBytes += bytes
  }

  function dropTail(): void {
    tailLive = false
    tail = []
    tailHead = 0
    tailBytes = 0
    tailCount = 0
  }

  /** Hands out up to `max` messages from the tail and moves the read position past them. */
  function takeFromTail(max: number): { messages: string[]; end: LogPosition } {
    const messages: string[] = []
    let end: LogPosition = read
    while (tailHead < tail.length && messages.length < max) {
      const c = tail[tailHead]!
      const take = Math.min(max - messages.length, c.messages.length - c.next)
      const before = c.start
      if (c.next === 0 && take === c.messages.length) {
        for (const m of c.messages) messages.push(m)
        c.next = take
        c.start = c.end
      } else {
        // Splitting a chunk: the byte length of the part handed out is needed for its end position.
        let bytes = 0
        for (let i = c.next; i < c.next + take; i++) {
          messages.push(c.messages[i]!)
          bytes += Buffer.byteLength(c.messages[i]!, 'utf8') + 1
        }
        c.next += take
        c.start += bytes
      }
      tailBytes -= c.start - before
      tailCount -= take
      end = { seg: c.seg, off: c.start }
      if (c.next === c.messages.length) tailHead++
    }
    if (tailHead > 1024 && tailHead * 2 > tail.length) {
      tail = tail.slice(tailHead)
      tailHead = 0
    }
    read = end
    return { messages, end }
  }

  async function rotate(): Promise<void> {
    // The new segment is opened first: if that fails (no space for the file), the current one
    // stays the write segment and a later flush tries again.
    crashPoint('queue.rotate.before-open')
    const next = await open(segmentPath(dir, writeSeg + 1), 'w+')
    try {
      await syncDir(dir)
    } catch (err) {
      await next.close()
      await unlink(segmentPath(dir, writeSeg + 1)).catch(() => undefined)
      throw err
    }
    const old = writeFd
    sealed.set(writeSeg, writeOff)
    writeSeg++
    writeOff = 0
    writeFd = next
    crashPoint('queue.rotate.after-open')
    await old.close().catch(() => undefined)
  }

  // --- consumer side ---------------------------------------------------------------------------
  let wake: (() => void) | null = null
  let stopping = false
  let consumerDone: Promise<void> | null = null
  let readFd: { seg: number; fd: FileHandle } | null = null
  let carry: { records: string[]; ends: LogPosition[] } = { records: [], ends: [] }
  let tail: TailChunk[] = []
  let tailHead = 0
  let tailBytes = 0
  let tailCount = 0
  let tailLive = false
  const drainWaiters = new Set<() => void>()

  function wakeConsumer(): void {
    const w = wake
    wake = null
    w?.()
  }

  function hasUnread(): boolean {
    return carry.records.length > 0 || comparePositions(read, durable) < 0
  }

  function waitForData(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === undefined ? null : setTimeout(resolve, ms)
      wake = () => {
        if (timer) clearTimeout(timer)
        resolve()
      }
    })
  }

  async function fillCarry(): Promise<void> {
    if (read.seg < durable.seg && read.off >= (sealed.get(read.seg) ?? 0)) {
      read = { seg: read.seg + 1, off: 0 }
    }
    const limit = read.seg === durable.seg ? durable.off : (sealed.get(read.seg) ?? 0)
    if (read.off >= limit) return
    if (readFd?.seg !== read.seg) {
      await readFd?.fd.close()
      readFd = { seg: read.seg, fd: await open(segmentPath(dir, read.seg), 'r') }
    }
    const seg = read.seg
    const { records, ends } = await readRecords(readFd.fd, read.off, limit, READ_CHUNK_BYTES)
    for (let i = 0; i < records.length; i++) {
      carry.records.push(records[i]!)
      carry.ends.push({ seg, off: ends[i]! })
    }
    if (ends.length > 0) read = { seg, off: ends[ends.length - 1]! }
  }

  async function nextBatch(maxBatch: number, maxWaitMs: number): Promise<{ messages: string[]; end: LogPosition } | null> {
    while (!hasUnread()) {
      if (stopping) return null
      await waitForData()
    }
    if (carry.records.length < maxBatch && maxWaitMs > 0 && !stopping) {
      const unreadBytes = read.seg === durable.seg ? durable.off - read.off : Infinity
      if (carry.records.length === 0 && tailCount < maxBatch && unreadBytes < 1024 * 1024) await waitForData(maxWaitMs)
    }
    if (tailLive && tailCount > 0) return takeFromTail(maxBatch)
    while (carry.records.length < maxBatch && comparePositions(read, durable) < 0) {
      const before = carry.records.length
      await fillCarry()
      if (carry.records.length === before && comparePositions(read, durable) >= 0) break
    }
    const n = Math.min(maxBatch, carry.records.length)
    if (n === 0) return null
    const messages = carry.records.splice(0, n)
    const ends = carry.ends.splice(0, n)
    return { messages, end: ends[n - 1]! }
  }

  async function acknowledge(end: LogPosition, count: number): Promise<void> {
    ack = end
    stats.acked += count
    crashPoint('queue.ack.before-write')
    await ackWriter.write(end)
    crashPoint('queue.ack.after-write')
    for (const s of [...sealed.keys()]) {
      if (s < ack.seg) {
        sealed.delete(s)
        crashPoint('queue.segment.before-delete')
        await unlink(segmentPath(dir, s)).catch(() => undefined)
        crashPoint('queue.segment.after-delete')
      }
    }
    if (comparePositions(ack, durable) >= 0) for (const d of drainWaiters) d()
  }

  /** A pause that new publishes do not cut short (only close does). */
  let wakeBackoff: (() => void) | null = null
  function backoff(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        wakeBackoff = null
        resolve()
      }
      wakeBackoff = done
    })
  }

  async function consumeLoop(handler: BatchHandler, o: ConsumeOptions): Promise<void> {
    const minDelay = o.retryDelayMs ?? 1000
    const maxDelay = Math.max(minDelay, o.retryMaxDelayMs ?? 30_000)
    // Failed deliveries in a row of the batch at the acknowledged position.
    let failures = 0
    while (!stopping) {
      let batch: { messages: string[]; end: LogPosition } | null
      try {
        batch = await nextBatch(o.maxBatch, o.maxWaitMs)
        if (!batch) continue
        crashPoint('worker.batch-received')
        await handler(batch.messages, { attempt: failures + 1 })
      } catch (err) {
        // The handler failed (or reading the segment did): start again from the acknowledged
        // position after a backoff that doubles per failure in a row.
        failures++
        stats.failedBatches++
        opts.logger?.debug({ err, failures }, 'event batch failed; it will be delivered again')
        read = { ...ack }
        carry = { records: [], ends: [] }
        dropTail()
        if (readFd) {
          await readFd.fd.close().catch(() => undefined)
          readFd = null
        }
        if (!stopping) await backoff(Math.min(maxDelay, minDelay * 2 ** Math.min(failures - 1, 30)))
        continue
      }
      failures = 0
      crashPoint('worker.before-ack')
      try {
        await acknowledge(batch.end, batch.messages.length)
      } catch (err) {
        // The events are stored; a lost ack position only means they are delivered again (deduped).
        opts.logger?.warn({ err }, 'event queue could not record the acknowledged position')
      }
      crashPoint('worker.after-ack')
    }
  }

  return {
    publish(messages) {
      if (closed) return Promise.reject(new Error('event queue is closed'))
      if (messages.length === 0) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        pending.push(messages.join('\n') + '\n')
        pendingMessages.push(messages.slice())
        pendingCount += messages.length
        waiters.push({ resolve, reject })
        // setImmediate lets every request parsed in this turn of the event loop join the flush.
        flushing ??= new Promise<void>((r) => setImmediate(r)).then(flushLoop)
      })
    },
    consume(handler, o) {
      if (consumerDone) throw new Error('event queue already has a consumer')
      consumerDone = consumeLoop(handler, o)
    },
    async drain(timeoutMs) {
      await flushing
      if (comparePositions(ack, durable) >= 0) return true
      let done!: () => void
      const drained = new Promise<boolean>((resolve) => {
        done = () => resolve(true)
      })
      drainWaiters.add(done)
      const timer = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs))
      const ok = await Promise.race([drained, timer])
      drainWaiters.delete(done)
      return ok
    },
    stats: () => ({ ...stats }),
    writeState(): QueueWriteState {
      const f = writeFailure
      return f ? { writable: false, reason: f.reason, since: f.since.toISOString() } : { writable: true, reason: null, since: null }
    },
    async close() {
      if (closed) return
      closed = true
      if (probeTimer) clearTimeout(probeTimer)
      while (flushing) await flushing
      stopping = true
      wakeConsumer()
      wakeBackoff?.()
      await consumerDone
      await readFd?.fd.close()
      await writeFd.close()
      await ackWriter.close()
    },
  }
}

/**
 * The deliberately broken queue of the kill -9 matrix (TALLY_UNSAFE_ACK_BEFORE_FSYNC, test-only):
 * answers the publishers, and lets their 200s go out, before their messages are written.
 */
async function answerEarly(ws: Array<{ resolve: () => void }>): Promise<void> {
  for (const w of ws) w.resolve()
  await new Promise((r) => setImmediate(r))
}

function describe(err: unknown): string {
  const o = (err ?? {}) as { code?: unknown; message?: unknown }
  const message = (typeof o.message === 'string' ? o.message : String(err)).split('\n')[0]!
  return typeof o.code === 'string' && !message.includes(o.code) ? `${o.code}: ${message}` : message
}

async function writeFully(fd: FileHandle, buf: Buffer, position: number): Promise<void> {
  let done = 0
  while (done < buf.length) {
    const { bytesWritten } = await fd.write(buf, done, buf.length - done, position + done)
    done += bytesWritten
  }
}
