import { open, stat } from 'node:fs/promises'
import type { QueueBacklog } from './event-queue.ts'
import { comparePositions, segmentPath, type LogPosition, type RecoveredLog } from './segment-log.ts'

/** Flushes closer together than this share one time mark (the earlier time: the age never reads low). */
const MARK_MERGE_MS = 100
const COUNT_CHUNK_BYTES = 4 * 1024 * 1024

interface Mark {
  /** Everything before this position was durable at `at`. */
  end: LogPosition
  at: number
}

/**
 * The published-but-unacknowledged figures of the segment log. Bytes come from the positions (the
 * durable end minus the acknowledged position, across segments); the message count is the number
 * of records found after the acknowledged position on open, plus those written, minus those
 * acknowledged since; the age comes from time marks per flush (per segment file mtime for what was
 * there on open). Reading it walks the sealed segments only: cheap enough for every scrape.
 */
export class BacklogTracker {
  private events: number
  private marks: Mark[]
  private head = 0

  constructor(initial: { events: number; marks: Mark[] }) {
    this.events = initial.events
    this.marks = initial.marks
  }

  /** After a flush: `count` messages are durable up to `end`. */
  written(count: number, end: LogPosition, now = Date.now()): void {
    this.events += count
    const last = this.marks.length > this.head ? this.marks[this.marks.length - 1]! : null
    if (last && now - last.at < MARK_MERGE_MS) last.end = end
    else this.marks.push({ end, at: now })
  }

  /** After an acknowledgement of `count` messages, up to `ack`. */
  acked(count: number, ack: LogPosition): void {
    this.events -= count
    while (this.head < this.marks.length && comparePositions(this.marks[this.head]!.end, ack) <= 0) this.head++
    if (this.head > 1024 && this.head * 2 > this.marks.length) {
      this.marks = this.marks.slice(this.head)
      this.head = 0
    }
  }

  read(ack: LogPosition, durable: LogPosition, sealed: ReadonlyMap<number, number>, now = Date.now()): QueueBacklog {
    const bytes = bytesBetween(ack, durable, sealed)
    const oldest = bytes > 0 && this.head < this.marks.length ? this.marks[this.head]!.at : now
    return { events: this.events, bytes, oldestAgeMs: Math.max(0, now - oldest) }
  }
}

/** Bytes of the log from `from` to `to`: the rest of `from`'s segment, the sealed ones between, and `to`'s part. */
export function bytesBetween(from: LogPosition, to: LogPosition, sealed: ReadonlyMap<number, number>): number {
  if (comparePositions(from, to) >= 0) return 0
  if (from.seg === to.seg) return to.off - from.off
  let bytes = (sealed.get(from.seg) ?? from.off) - from.off + to.off
  for (const [seg, size] of sealed) if (seg > from.seg && seg < to.seg) bytes += size
  return bytes
}

/**
 * The backlog of a just-recovered log: counts the records after the acknowledged position (one
 * sequential read of the unacknowledged bytes) and marks each segment's end with its file mtime.
 */
export async function scanBacklog(dir: string, log: RecoveredLog): Promise<{ events: number; marks: Mark[] }> {
  const segments: Array<[number, number]> = [...log.sealed].filter(([s]) => s >= log.ack.seg)
  segments.push([log.writeSeg, log.writeOff])
  segments.sort((a, b) => a[0] - b[0])
  let events = 0
  const marks: Mark[] = []
  for (const [seg, size] of segments) {
    const from = seg === log.ack.seg ? log.ack.off : 0
    if (size <= from) continue
    events += await countRecords(segmentPath(dir, seg), from, size)
    marks.push({ end: { seg, off: size }, at: (await stat(segmentPath(dir, seg))).mtimeMs })
  }
  return { events, marks }
}

async function countRecords(file: string, from: number, to: number): Promise<number> {
  const fd = await open(file, 'r')
  const buf = Buffer.allocUnsafe(Math.min(COUNT_CHUNK_BYTES, to - from))
  let count = 0
  try {
    for (let pos = from; pos < to; ) {
      const { bytesRead } = await fd.read(buf, 0, Math.min(buf.length, to - pos), pos)
      if (bytesRead === 0) break
      for (let i = buf.indexOf(10, 0); i >= 0 && i < bytesRead; i = buf.indexOf(10, i + 1)) count++
      pos += bytesRead
    }
  } finally {
    await fd.close()
  }
  return count
}
