import type { LogPosition } from './segment-log.ts'
import type { FlushedGroup } from './segment-writer.ts'

const HANDED_OUT: string[] = []

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
 * Just-flushed messages kept in memory for the consumer, so it need not read back (and re-decode)
 * what was just written. While `live`, it holds exactly the durable messages after the reader's
 * position; once it would pass its byte budget it is dropped and the reader goes to the files.
 */
export class MessageTail {
  live = false
  /** Messages held and not yet handed out. */
  count = 0
  private chunks: TailChunk[] = []
  private head = 0
  private bytes = 0

  constructor(private readonly maxBytes: number) {}

  /** Keeps a flushed group (when live); drops the whole tail when it would pass the budget. */
  append(group: FlushedGroup): void {
    if (!this.live) return
    if (this.bytes + group.bytes > this.maxBytes) {
      this.drop()
      return
    }
    let start = group.start
    for (let i = 0; i < group.messages.length; i++) {
      const end = group.start + group.ends[i]!
      this.chunks.push({ messages: group.messages[i]!, next: 0, seg: group.seg, start, end })
      this.count += group.messages[i]!.length
      start = end
    }
    this.bytes += group.bytes
  }

  drop(): void {
    this.live = false
    this.chunks = []
    this.head = 0
    this.bytes = 0
    this.count = 0
  }

  /** Hands out up to `max` messages; `end` is the log position after the last one (`from` if none). */
  take(max: number, from: LogPosition): { messages: string[]; end: LogPosition } {
    const messages: string[] = []
    let end = from
    while (this.head < this.chunks.length && messages.length < max) {
      const c = this.chunks[this.head]!
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
      this.bytes -= c.start - before
      this.count -= take
      end = { seg: c.seg, off: c.start }
      if (c.next === c.messages.length) {
        // The chunk stays in the array until the next compaction; its messages go now. (Kept, they
        // held ~1,000 requests of events in the heap, ~35 s of a steady /batch/ load, through every
        // mark-compact: the old generation climbed to ~500 MB before one compaction freed it all.)
        c.messages = HANDED_OUT
        this.head++
      }
    }
    if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head)
      this.head = 0
    }
    return { messages, end }
  }
}
