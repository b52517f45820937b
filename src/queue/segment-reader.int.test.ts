import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import type { BatchDelivery } from './event-queue.ts'
import { openAckWriter, segmentPath, type LogPosition } from './segment-log.ts'
import { SegmentReader, type DurableLog } from './segment-reader.ts'

const root = await mkdtemp(path.join(os.tmpdir(), 'tally-reader-test-'))
after(() => rm(root, { recursive: true, force: true }))
let n = 0

/**
 * A log written by hand, as a writer (or a crashed process) left it: segment i + 1 holds
 * `segments[i]`. The reader gets the durable end and the sealed sizes, nothing else of a writer.
 */
async function handWrittenLog(segments: string[][]): Promise<{ dir: string; log: DurableLog & { end: LogPosition } }> {
  const dir = path.join(root, `r${++n}`)
  await mkdir(dir)
  const sealed = new Map<number, number>()
  let end: LogPosition = { seg: 1, off: 0 }
  for (let i = 0; i < segments.length; i++) {
    const bytes = Buffer.from(segments[i]!.map((m) => `${m}\n`).join(''))
    await writeFile(segmentPath(dir, i + 1), bytes)
    if (i < segments.length - 1) sealed.set(i + 1, bytes.length)
    end = { seg: i + 1, off: bytes.length }
  }
  const log = { sealed, end, durable: () => log.end }
  return { dir, log }
}

async function openReader(t: { after(fn: () => Promise<void>): void }, dir: string, log: DurableLog, ack: LogPosition, maxTailBytes = 0) {
  const ackWriter = await openAckWriter(dir)
  const reader = new SegmentReader({ dir, log, ack, ackWriter, maxTailBytes })
  t.after(async () => {
    await reader.stop()
    await ackWriter.close()
  })
  return reader
}

const words = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`)

test('segment reader: after a restart reads the files from the acknowledged position on, across segments, in batches of at most maxBatch', async (t) => {
  const { dir, log } = await handWrittenLog([words('a', 5), words('b', 7), words('c', 3)])
  // Acknowledged up to and including b1 (segment 2, after "b0\nb1\n").
  const reader = await openReader(t, dir, log, { seg: 2, off: 6 })
  const batches: string[][] = []
  reader.consume(async (m) => void batches.push(m), { maxBatch: 4, maxWaitMs: 1 })
  assert.equal(await reader.drain(5000), true)
  assert.ok(batches.every((b) => b.length <= 4))
  assert.deepEqual(batches.flat(), [...words('b', 7).slice(2), ...words('c', 3)])
  assert.deepEqual(reader.ack(), log.durable())
  assert.equal(reader.acked, 8)
})

test('segment reader: a failed batch is delivered again, same messages in the same order, with its attempt number, then the rest', async (t) => {
  const { dir, log } = await handWrittenLog([words('m', 10)])
  const reader = await openReader(t, dir, log, { seg: 1, off: 0 })
  const deliveries: Array<{ messages: string[]; attempt: number }> = []
  let failuresLeft = 2
  reader.consume(
    async (messages: string[], d: BatchDelivery) => {
      deliveries.push({ messages, attempt: d.attempt })
      if (messages[0] === 'm3' && failuresLeft-- > 0) throw new Error('store down')
    },
    { maxBatch: 3, maxWaitMs: 1, retryDelayMs: 1, retryMaxDelayMs: 2 },
  )
  assert.equal(await reader.drain(5000), true)
  assert.deepEqual(deliveries, [
    { messages: ['m0', 'm1', 'm2'], attempt: 1 },
    { messages: ['m3', 'm4', 'm5'], attempt: 1 },
    { messages: ['m3', 'm4', 'm5'], attempt: 2 },
    { messages: ['m3', 'm4', 'm5'], attempt: 3 },
    { messages: ['m6', 'm7', 'm8'], attempt: 1 },
    { messages: ['m9'], attempt: 1 },
  ])
  assert.equal(reader.failedBatches, 2)
  assert.equal(reader.acked, 10)
})

test('segment reader: deletes each segment once everything in it is acknowledged, and records the position', async (t) => {
  const { dir, log } = await handWrittenLog([words('a', 3), words('b', 3), words('c', 3), words('d', 2)])
  const reader = await openReader(t, dir, log, { seg: 1, off: 0 })
  const files = async () => (await readdir(dir)).filter((f) => f.endsWith('.log')).length
  const seenFiles: number[] = []
  reader.consume(async () => void seenFiles.push(await files()), { maxBatch: 3, maxWaitMs: 1 })
  assert.equal(await reader.drain(5000), true)
  // A segment goes with the first acknowledgement past its end (a batch ending exactly at it keeps it).
  assert.deepEqual(seenFiles, [4, 4, 3, 2])
  assert.equal(await files(), 1)
  assert.deepEqual([...log.sealed.keys()], [])
  assert.deepEqual(JSON.parse(await readFile(path.join(dir, 'ack.json'), 'utf8')), log.durable())
})

test('segment reader: just-written groups come from memory while it keeps up (no read-back), from the files when the tail is off', async (t) => {
  for (const maxTailBytes of [1024, 0]) {
    const { dir, log } = await handWrittenLog([[]])
    const reader = await openReader(t, dir, log, { seg: 1, off: 0 }, maxTailBytes)
    const got: string[] = []
    reader.consume(async (m) => void got.push(...m), { maxBatch: 100, maxWaitMs: 1 })
    // The file says "disk-*"; the writer's group (as handed over after its fsync) says "mem-*".
    const disk = Buffer.from('disk-0\ndisk-1\n')
    await writeFile(segmentPath(dir, 1), disk)
    reader.written({ messages: [['mem-0', 'mem-1']], seg: 1, start: 0, ends: [disk.length], bytes: disk.length })
    log.end = { seg: 1, off: disk.length }
    reader.notify()
    assert.equal(await reader.drain(5000), true)
    assert.deepEqual(got, maxTailBytes > 0 ? ['mem-0', 'mem-1'] : ['disk-0', 'disk-1'])
  }
})
