import { open, unlink, type FileHandle } from 'node:fs/promises'
import type { Logger } from 'pino'
import type { BatchHandler, ConsumeOptions, EventQueue, EventQueueStats } from './event-queue.ts'
import {
  comparePositions,
  openAckWriter,
  readRecords,
  recoverLog,
  segmentPath,
  syncDir,
  type LogPosition,
} from './segment-log.ts'

export interface FileEventQueueOptions {
  dir: string
  /** A new segment file is started once the current one would pass this size. */
  segmentBytes?: number
  logger?: Pick<Logger, 'warn' | 'error'>
}

const READ_CHUNK_BYTES = 4 * 1024 * 1024

/**
 * The embedded EventQueue: an append-only segment log on local disk with group commit.
 * Every `publish` that arrives while a flush is running joins the next one: one write and one
 * fdatasync serve all of them, and each caller's promise resolves after that fsync. The consumer
 * reads back what is durable (from the page cache in practice), hands it out in batches and records
 * the acknowledged position; on open, everything after that position is delivered again. Fully
 * acknowledged segments are deleted.
 */
export async function openFileEventQueue(opts: FileEventQueueOptions): Promise<EventQueue> {
  const { dir } = opts
  const segmentBytes = opts.segmentBytes ?? 64 * 1024 * 1024
  const log = await recoverLog(dir)
  const ackWriter = await openAckWriter(dir)
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
  let pendingCount = 0
  let waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = []
  let flushing: Promise<void> | null = null
  let closed = false
  let broken: Error | null = null

  async function flushLoop(): Promise<void> {
    while (pending.length > 0) {
      const chunks = pending
      const count = pendingCount
      const ws = waiters
      pending = []
      pendingCount = 0
      waiters = []
      try {
        if (broken) throw broken
        const buf = Buffer.from(chunks.join(''), 'utf8')
        if (writeOff > 0 && writeOff + buf.length > segmentBytes) await rotate()
        await writeFully(writeFd, buf, writeOff)
        await writeFd.datasync()
        writeOff += buf.length
        durable = { seg: writeSeg, off: writeOff }
        stats.published += count
        stats.flushes++
        for (const w of ws) w.resolve()
        wakeConsumer()
      } catch (err) {
        // Undo a partial write so the log stays a sequence of whole records.
        await writeFd.truncate(writeOff).catch((truncErr: unknown) => {
          broken = new Error(`event queue unusable after a failed write: ${String(truncErr)}`)
        })
        opts.logger?.error({ err }, 'event queue flush failed')
        for (const w of ws) w.reject(err)
      }
    }
    flushing = null
  }

  async function rotate(): Promise<void> {
    await writeFd.close()
    sealed.set(writeSeg, writeOff)
    writeSeg++
    writeOff = 0
    writeFd = await open(segmentPath(dir, writeSeg), 'w+')
    await syncDir(dir)
  }

  // --- consumer side ---------------------------------------------------------------------------
  let wake: (() => void) | null = null
  let stopping = false
  let consumerDone: Promise<void> | null = null
  let readFd: { seg: number; fd: FileHandle } | null = null
  let carry: { records: string[]; ends: LogPosition[] } = { records: [], ends: [] }
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
      if (carry.records.length === 0 && unreadBytes < 1024 * 1024) await waitForData(maxWaitMs)
    }
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
    await ackWriter.write(end)
    for (const s of [...sealed.keys()]) {
      if (s < ack.seg) {
        sealed.delete(s)
        await unlink(segmentPath(dir, s)).catch(() => undefined)
      }
    }
    if (comparePositions(ack, durable) >= 0) for (const d of drainWaiters) d()
  }

  async function consumeLoop(handler: BatchHandler, o: ConsumeOptions): Promise<void> {
    while (!stopping) {
      const batch = await nextBatch(o.maxBatch, o.maxWaitMs)
      if (!batch) continue
      try {
        await handler(batch.messages)
      } catch (err) {
        stats.failedBatches++
        opts.logger?.warn({ err, size: batch.messages.length }, 'event batch failed; it will be delivered again')
        read = { ...ack }
        carry = { records: [], ends: [] }
        if (!stopping) await waitForData(o.retryDelayMs ?? 1000)
        continue
      }
      await acknowledge(batch.end, batch.messages.length)
    }
  }

  return {
    publish(messages) {
      if (closed) return Promise.reject(new Error('event queue is closed'))
      if (messages.length === 0) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        pending.push(messages.join('\n') + '\n')
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
    async close() {
      if (closed) return
      closed = true
      while (flushing) await flushing
      stopping = true
      wakeConsumer()
      await consumerDone
      await readFd?.fd.close()
      await writeFd.close()
      await ackWriter.close()
    },
  }
}

async function writeFully(fd: FileHandle, buf: Buffer, position: number): Promise<void> {
  let done = 0
  while (done < buf.length) {
    const { bytesWritten } = await fd.write(buf, done, buf.length - done, position + done)
    done += bytesWritten
  }
}
