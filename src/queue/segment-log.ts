import { mkdir, open, readdir, readFile, stat, unlink, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { crashPoint } from '../shared/crash-points.ts'

/** A byte position in the log: segment number and offset inside it. */
export interface LogPosition {
  seg: number
  off: number
}

const SUFFIX = '.log'
const ACK_FILE = 'ack.json'
const ACK_BYTES = 64

export function segmentPath(dir: string, seg: number): string {
  return path.join(dir, `${String(seg).padStart(12, '0')}${SUFFIX}`)
}

export function comparePositions(a: LogPosition, b: LogPosition): number {
  return a.seg !== b.seg ? a.seg - b.seg : a.off - b.off
}

export interface RecoveredLog {
  /** The acknowledged position (everything before it was processed). */
  ack: LogPosition
  /** Sizes of the complete segments before the last one. */
  sealed: Map<number, number>
  /** The segment being written, opened for writing, and its valid length. */
  writeSeg: number
  writeFd: FileHandle
  writeOff: number
}

/**
 * Opens (creating if needed) a segment log directory after a clean stop or a crash: removes
 * segments wholly before the acknowledged position and cuts a torn last record (bytes after the
 * last '\n': written by a request that never got its answer) off the newest segment.
 */
export async function recoverLog(dir: string): Promise<RecoveredLog> {
  await mkdir(dir, { recursive: true })
  const segs = (await readdir(dir))
    .filter((f) => f.endsWith(SUFFIX))
    .map((f) => Number(f.slice(0, -SUFFIX.length)))
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b)
  const saved = await readAck(dir)
  if (segs.length === 0) {
    const seg = Math.max(1, saved?.seg ?? 1)
    const writeFd = await open(segmentPath(dir, seg), 'w+')
    await syncDir(dir)
    return { ack: { seg, off: 0 }, sealed: new Map(), writeSeg: seg, writeFd, writeOff: 0 }
  }
  let ack: LogPosition = saved && segs.includes(saved.seg) ? saved : { seg: segs[0]!, off: 0 }
  for (const s of segs.filter((s) => s < ack.seg)) await unlink(segmentPath(dir, s))
  const live = segs.filter((s) => s >= ack.seg)
  const sealed = new Map<number, number>()
  for (const s of live.slice(0, -1)) sealed.set(s, (await stat(segmentPath(dir, s))).size)
  const writeSeg = live[live.length - 1]!
  const writeFd = await open(segmentPath(dir, writeSeg), 'r+')
  const writeOff = await validLength(writeFd)
  crashPoint('recover.before-truncate')
  await writeFd.truncate(writeOff)
  await writeFd.datasync()
  crashPoint('recover.after-truncate')
  if (ack.seg === writeSeg && ack.off > writeOff) ack = { seg: writeSeg, off: writeOff }
  return { ack, sealed, writeSeg, writeFd, writeOff }
}

/** Length of the file up to and including its last '\n'. */
async function validLength(fd: FileHandle): Promise<number> {
  const size = (await fd.stat()).size
  const chunk = Buffer.allocUnsafe(64 * 1024)
  let end = size
  while (end > 0) {
    const start = Math.max(0, end - chunk.length)
    const { bytesRead } = await fd.read(chunk, 0, end - start, start)
    const nl = chunk.subarray(0, bytesRead).lastIndexOf(10)
    if (nl >= 0) return start + nl + 1
    end = start
  }
  return 0
}

async function readAck(dir: string): Promise<LogPosition | null> {
  try {
    const parsed = JSON.parse(await readFile(path.join(dir, ACK_FILE), 'utf8')) as Partial<LogPosition>
    if (Number.isInteger(parsed.seg) && Number.isInteger(parsed.off) && parsed.seg! > 0 && parsed.off! >= 0) {
      return { seg: parsed.seg!, off: parsed.off! }
    }
  } catch {
    // Missing or torn: start from the oldest segment (redelivery is harmless, loss is not).
  }
  return null
}

/**
 * Writes the acknowledged position in place (one fixed-size write, no fsync): losing it only means
 * redelivering messages whose effects were already made durable by the consumer, which dedupes.
 */
export async function openAckWriter(dir: string): Promise<{ write(pos: LogPosition): Promise<void>; close(): Promise<void> }> {
  const fd = await open(path.join(dir, ACK_FILE), 'a+').then(async (h) => {
    await h.close()
    return open(path.join(dir, ACK_FILE), 'r+')
  })
  const buf = Buffer.alloc(ACK_BYTES, 0x20)
  return {
    async write(pos) {
      buf.fill(0x20)
      buf.write(JSON.stringify(pos))
      buf[ACK_BYTES - 1] = 10
      await fd.write(buf, 0, ACK_BYTES, 0)
    },
    close: () => fd.close(),
  }
}

/** Writes all of `buf` at `position` (a write may take only part of it). */
export async function writeFully(fd: FileHandle, buf: Buffer, position: number): Promise<void> {
  let done = 0
  while (done < buf.length) {
    const { bytesWritten } = await fd.write(buf, done, buf.length - done, position + done)
    done += bytesWritten
  }
}

/** Makes a newly created segment's directory entry durable. */
export async function syncDir(dir: string): Promise<void> {
  const fd = await open(dir, 'r')
  try {
    await fd.sync()
  } finally {
    await fd.close()
  }
}

/**
 * Reads the complete records between `from` and `limit` (same segment), at most about `maxBytes`
 * (more when a single record is larger). Returns the records and the end offset of each.
 */
export async function readRecords(
  fd: FileHandle,
  from: number,
  limit: number,
  maxBytes: number,
): Promise<{ records: string[]; ends: number[] }> {
  let want = Math.min(limit - from, maxBytes)
  for (;;) {
    const buf = Buffer.allocUnsafe(want)
    const { bytesRead } = await fd.read(buf, 0, want, from)
    const data = buf.subarray(0, bytesRead)
    const last = data.lastIndexOf(10)
    if (last < 0) {
      if (from + bytesRead >= limit) return { records: [], ends: [] }
      want = Math.min(limit - from, want * 2)
      continue
    }
    const text = data.toString('utf8', 0, last)
    const records = text.split('\n')
    const ends: number[] = new Array(records.length)
    // Byte ends: walk the newline positions in the buffer (records may hold multi-byte characters).
    let pos = -1
    for (let i = 0; i < records.length; i++) {
      pos = data.indexOf(10, pos + 1)
      ends[i] = from + pos + 1
    }
    return { records, ends }
  }
}
