import { QueueFullError, type EventQueue } from './event-queue.ts'
import { BacklogTracker, bytesBetween, scanBacklog } from './backlog.ts'
import { openAckWriter, recoverLog } from './segment-log.ts'
import { SegmentReader } from './segment-reader.ts'
import { SegmentWriter, type QueueLogger } from './segment-writer.ts'
import { crashPoint } from '../shared/crash-points.ts'

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
  logger?: QueueLogger
  /**
   * After a failed write, while nobody publishes, the queue probes the disk on this backoff
   * (doubling from min to max) so that its write state comes back without traffic (250 ms, 5 s).
   */
  probeMinMs?: number
  probeMaxMs?: number
  /**
   * Bound on the backlog (bytes published and not yet acknowledged, plus publishes being written):
   * a publish that would take it past this is refused with `QueueFullError`, and so is every
   * publish after that until the worker has brought the backlog under 90 % of the bound (large
   * batches are not starved by small ones slipping into the last few bytes, and the state changes
   * are logged once per episode). An empty queue takes any publish, so one request larger than the
   * bound still goes through. Incoming messages are counted by their characters (+1 each for the
   * newline). Default: no bound.
   */
  maxBacklogBytes?: number
}

/** Once the backlog bound refused a publish, publishes are taken again below this part of it. */
const RESUME_FRACTION = 0.9

/**
 * The embedded EventQueue: an append-only segment log on local disk (`segment-log.ts`), written
 * with group commit by a `SegmentWriter` and consumed by a `SegmentReader`, which gets what was
 * just made durable from memory and reads the files when behind. On open, everything after the
 * acknowledged position is delivered again from the files. Fully acknowledged segments are deleted.
 */
export async function openFileEventQueue(opts: FileEventQueueOptions): Promise<EventQueue> {
  const { dir } = opts
  const log = await recoverLog(dir)
  const ackWriter = await openAckWriter(dir)
  crashPoint('recover.done')
  const backlog = new BacklogTracker(await scanBacklog(dir, log))
  let reader: SegmentReader | null = null
  const writer = new SegmentWriter({
    dir,
    log,
    segmentBytes: opts.segmentBytes ?? 64 * 1024 * 1024,
    logger: opts.logger,
    probeMinMs: opts.probeMinMs,
    probeMaxMs: opts.probeMaxMs,
    onWritten: (group) => {
      reader!.written(group)
      backlog.written(group.messages.reduce((n, m) => n + m.length, 0), { seg: group.seg, off: group.start + group.bytes })
    },
    onDurable: () => reader!.notify(),
  })
  reader = new SegmentReader({
    dir,
    log: writer,
    ack: log.ack,
    ackWriter,
    maxTailBytes: opts.maxTailBytes ?? 64 * 1024 * 1024,
    logger: opts.logger,
    onAck: (count, ack) => backlog.acked(count, ack),
  })
  let closed = false
  const maxBacklog = opts.maxBacklogBytes ?? Number.POSITIVE_INFINITY
  const resumeBelow = Math.floor(maxBacklog * RESUME_FRACTION)
  /** Characters of publishes handed to the writer and not yet settled. */
  let inFlight = 0
  /** Since when publishes are being refused for the bound (null: they are not). */
  let fullSince: number | null = null

  const publish = (messages: string[]): Promise<void> => {
    if (maxBacklog === Number.POSITIVE_INFINITY || messages.length === 0) return writer.publish(messages)
    let size = messages.length
    for (const m of messages) size += m.length
    const used = bytesBetween(reader.ack(), writer.durable(), writer.sealed) + inFlight
    if (used > 0 && (used + size > maxBacklog || (fullSince !== null && used >= resumeBelow))) {
      if (fullSince === null) {
        fullSince = Date.now()
        opts.logger?.warn({ backlogBytes: used, limitBytes: maxBacklog }, 'event queue backlog at its limit: capture answers 503 until the worker catches up')
      }
      return Promise.reject(new QueueFullError(used, maxBacklog))
    }
    if (fullSince !== null) {
      opts.logger?.warn({ backlogBytes: used, limitBytes: maxBacklog, fullMs: Date.now() - fullSince }, 'event queue backlog below its limit again')
      fullSince = null
    }
    inFlight += size
    const written = writer.publish(messages)
    const settle = () => {
      inFlight -= size
    }
    written.then(settle, settle)
    return written
  }

  return {
    publish,
    consume: (handler, o) => reader.consume(handler, o),
    async drain(timeoutMs) {
      await writer.idle()
      return reader.drain(timeoutMs)
    },
    stats: () => ({ published: writer.published, flushes: writer.flushes, acked: reader.acked, failedBatches: reader.failedBatches }),
    backlog: () => backlog.read(reader.ack(), writer.durable(), writer.sealed),
    writeState: () => writer.writeState(),
    async close() {
      if (closed) return
      closed = true
      await writer.stop()
      await reader.stop()
      await writer.closeFile()
      await ackWriter.close()
    },
  }
}
