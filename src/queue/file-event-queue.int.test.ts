import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { eventQueueContract } from '../../test/contracts/event-queue.contract.ts'
import { openFileEventQueue } from './file-event-queue.ts'

const root = await mkdtemp(path.join(os.tmpdir(), 'tally-queue-test-'))
after(() => rm(root, { recursive: true, force: true }))
let n = 0
const newDir = async () => path.join(root, `q${++n}`)

eventQueueContract('file queue', (dir) => openFileEventQueue({ dir }), newDir)
eventQueueContract('file queue with tiny segments', (dir) => openFileEventQueue({ dir, segmentBytes: 64 }), newDir)
eventQueueContract('file queue read back from disk only', (dir) => openFileEventQueue({ dir, maxTailBytes: 0 }), newDir)
eventQueueContract('file queue with a tiny in-memory tail', (dir) => openFileEventQueue({ dir, maxTailBytes: 200, segmentBytes: 128 }), newDir)

test('file queue: concurrent publishes share group commits', async (t) => {
  const queue = await openFileEventQueue({ dir: await newDir() })
  t.after(() => queue.close())
  await Promise.all(Array.from({ length: 200 }, (_, i) => queue.publish([`m${i}`])))
  const stats = queue.stats()
  assert.equal(stats.published, 200)
  assert.ok(stats.flushes < 20, `expected few flushes, got ${stats.flushes}`)
})

test('file queue: deletes segments once every message in them is acknowledged', async (t) => {
  const dir = await newDir()
  const queue = await openFileEventQueue({ dir, segmentBytes: 32 })
  t.after(() => queue.close())
  for (let i = 0; i < 10; i++) await queue.publish([`message-number-${i}`])
  assert.ok((await readdir(dir)).filter((f) => f.endsWith('.log')).length >= 5)
  queue.consume(async () => {}, { maxBatch: 100, maxWaitMs: 1 })
  assert.equal(await queue.drain(5000), true)
  assert.ok((await readdir(dir)).filter((f) => f.endsWith('.log')).length <= 1)
})

test('file queue: drops a torn last record left by a crash', async (t) => {
  const dir = await newDir()
  const first = await openFileEventQueue({ dir })
  await first.publish(['whole-1', 'whole-2'])
  await first.close()
  const { appendFile } = await import('node:fs/promises')
  await appendFile(path.join(dir, '000000000001.log'), 'torn-without-newline')
  const second = await openFileEventQueue({ dir })
  t.after(() => second.close())
  const got: string[] = []
  second.consume(async (m) => void got.push(...m), { maxBatch: 10, maxWaitMs: 1 })
  await second.publish(['after'])
  assert.equal(await second.drain(5000), true)
  assert.deepEqual(got, ['whole-1', 'whole-2', 'after'])
})

test('file queue: batches cut inside one publish acknowledge exact byte positions (multi-byte text)', async (t) => {
  const dir = await newDir()
  const first = await openFileEventQueue({ dir })
  const sent = Array.from({ length: 95 }, (_, i) => `é-😀-${i}`)
  const got: string[] = []
  first.consume(async (m) => {
    assert.ok(m.length <= 10)
    got.push(...m)
  }, { maxBatch: 10, maxWaitMs: 1 })
  await first.publish(sent)
  assert.equal(await first.drain(5000), true)
  await first.close()
  assert.deepEqual(got, sent)
  const second = await openFileEventQueue({ dir })
  t.after(() => second.close())
  const again: string[] = []
  second.consume(async (m) => void again.push(...m), { maxBatch: 10, maxWaitMs: 1 })
  await second.publish(['new'])
  assert.equal(await second.drain(5000), true)
  assert.deepEqual(again, ['new'])
})

test('file queue: a failing batch is delivered again with its attempt number, and publishes do not cut the backoff short', async (t) => {
  const queue = await openFileEventQueue({ dir: await newDir() })
  const attempts: Array<{ first: string; attempt: number }> = []
  queue.consume(
    async (messages, delivery) => {
      attempts.push({ first: messages[0]!, attempt: delivery.attempt })
      if (attempts.length < 3) throw new Error('store down')
    },
    { maxBatch: 100, maxWaitMs: 1, retryDelayMs: 5, retryMaxDelayMs: 10 },
  )
  await queue.publish(['a', 'b'])
  assert.equal(await queue.drain(5000), true)
  assert.deepEqual(attempts, [{ first: 'a', attempt: 1 }, { first: 'a', attempt: 2 }, { first: 'a', attempt: 3 }])
  await queue.publish(['c'])
  assert.equal(await queue.drain(5000), true)
  assert.deepEqual(attempts.at(-1), { first: 'c', attempt: 1 })
  await queue.close()

  // A long backoff: new publishes wake the consumer, but not the failed batch's pause; close does.
  const slow = await openFileEventQueue({ dir: await newDir() })
  let calls = 0
  slow.consume(async () => {
    calls++
    throw new Error('store down')
  }, { maxBatch: 100, maxWaitMs: 1, retryDelayMs: 600_000 })
  await slow.publish(['x'])
  while (calls === 0) await new Promise((r) => setTimeout(r, 5))
  for (let i = 0; i < 20; i++) await slow.publish([`y${i}`])
  await new Promise((r) => setTimeout(r, 100))
  assert.equal(calls, 1)
  await slow.close()
  t.diagnostic('close ended the backoff')
})

test('file queue: a write that fails for lack of space is undone, reported in writeState, and writes resume once space is back', async (t) => {
  const mount = await mkdtemp(path.join(os.tmpdir(), 'tally-queue-tmpfs-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount])
  t.after(async () => {
    execFileSync('umount', ['-l', mount])
    await rm(mount, { recursive: true, force: true })
  })
  const dir = path.join(mount, 'q')
  const queue = await openFileEventQueue({ dir, probeMinMs: 5, probeMaxMs: 20 })
  t.after(() => queue.close())
  await writeFile(path.join(mount, 'filler'), Buffer.alloc(512 * 1024))
  const accepted: string[] = []
  let failure: unknown = null
  for (let i = 0; i < 200 && !failure; i++) {
    const batch = Array.from({ length: 10 }, (_, j) => `m${i}-${j}-${'p'.repeat(1000)}`)
    try {
      await queue.publish(batch)
      accepted.push(...batch)
    } catch (err) {
      failure = err
    }
  }
  assert.equal((failure as { code?: string } | null)?.code, 'ENOSPC')
  const blocked = queue.writeState()
  assert.equal(blocked.writable, false)
  assert.match(blocked.reason!, /ENOSPC/)
  await rm(path.join(mount, 'filler'))
  // The probe notices without any publish.
  while (!queue.writeState().writable) await new Promise((r) => setTimeout(r, 5))
  const later = ['after-1', 'after-2']
  await queue.publish(later)
  const delivered: string[] = []
  queue.consume(async (m) => {
    delivered.push(...m)
  }, { maxBatch: 1000, maxWaitMs: 1 })
  assert.equal(await queue.drain(5000), true)
  // Exactly what was acknowledged: no piece of the refused write.
  assert.deepEqual(delivered, [...accepted, ...later])
})

test('file queue: backlog counts the unacknowledged events and bytes across segments, the same after a reopen, with the age of the oldest', async (t) => {
  const dir = await newDir()
  const first = await openFileEventQueue({ dir, segmentBytes: 40 })
  assert.deepEqual(first.backlog(), { events: 0, bytes: 0, oldestAgeMs: 0 })
  const sent = Array.from({ length: 10 }, (_, i) => `message-${i}-é`) // 13 bytes each with '\n'
  for (const m of sent) await first.publish([m])
  assert.equal(first.backlog().events, 10)
  assert.equal(first.backlog().bytes, 130)
  // Only the batches before message-4 go through: the first 4 are acknowledged, 6 stay.
  first.consume(async (m) => {
    if (m.includes('message-4-é')) throw new Error('store down')
  }, { maxBatch: 2, maxWaitMs: 1, retryDelayMs: 600_000 })
  while (first.stats().acked < 4 || first.stats().failedBatches === 0) await new Promise((r) => setTimeout(r, 5))
  const left = first.backlog()
  assert.equal(left.events, 6)
  assert.equal(left.bytes, 6 * 13)
  await first.close()
  const files = (await readdir(dir)).filter((f) => f.endsWith('.log'))
  assert.ok(files.length >= 3, 'the backlog spans segments')
  // A day-old log: after a reopen the age comes from the segment files' mtime.
  const dayAgo = new Date(Date.now() - 86_400_000)
  for (const f of files) await utimes(path.join(dir, f), dayAgo, dayAgo)

  const second = await openFileEventQueue({ dir, segmentBytes: 40 })
  t.after(() => second.close())
  const reopened = second.backlog()
  assert.deepEqual({ events: reopened.events, bytes: reopened.bytes }, { events: 6, bytes: 6 * 13 })
  assert.ok(reopened.oldestAgeMs >= 86_400_000, `age ${reopened.oldestAgeMs}`)
  await second.publish(['fresh'])
  assert.equal(second.backlog().events, 7)
  const got: string[] = []
  second.consume(async (m) => void got.push(...m), { maxBatch: 3, maxWaitMs: 1 })
  assert.equal(await second.drain(5000), true)
  assert.deepEqual(got, [...sent.slice(4), 'fresh'])
  assert.deepEqual(second.backlog(), { events: 0, bytes: 0, oldestAgeMs: 0 })
})

test('file queue: a publish past the backlog bound is refused (nothing written) until the consumer brings it under 90 %, also after a reopen', async (t) => {
  const { QueueFullError } = await import('./event-queue.ts')
  const dir = await newDir()
  const msg = (i: number) => `${String(i).padStart(3, '0')}-${'x'.repeat(95)}` // 100 bytes with its newline
  const first = await openFileEventQueue({ dir, maxBacklogBytes: 1000, segmentBytes: 450 })
  for (let i = 0; i < 9; i++) await first.publish([msg(i)])
  await assert.rejects(first.publish([msg(9), msg(10)]), QueueFullError, 'two would pass the bound')
  await assert.rejects(first.publish(['a']), QueueFullError, 'refusing until under 90 %, even what would fit')
  assert.deepEqual({ events: first.backlog().events, bytes: first.backlog().bytes }, { events: 9, bytes: 900 })
  await first.close()

  // The backlog is read back from the log on open: still at the bound.
  const second = await openFileEventQueue({ dir, maxBacklogBytes: 1000, segmentBytes: 450 })
  t.after(() => second.close())
  await second.publish([msg(9)])
  await assert.rejects(second.publish([msg(10)]), QueueFullError)
  const got: string[] = []
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  second.consume(
    async (m) => {
      got.push(...m)
      if (got.length > 2) await held
    },
    { maxBatch: 2, maxWaitMs: 1 },
  )
  // Two acknowledged: 800 bytes left, under 90 % of 1000; then the consumer is held again.
  await new Promise<void>((resolve) => {
    const poll = () => (second.backlog().bytes <= 800 ? resolve() : setTimeout(poll, 5))
    poll()
  })
  await second.publish([msg(10)])
  release()
  assert.equal(await second.drain(5000), true)
  assert.deepEqual(got, Array.from({ length: 11 }, (_, i) => msg(i)))

  // An empty queue takes one publish larger than the bound.
  await second.publish(['y'.repeat(2000)])
})

test('file queue: consumed messages are not kept in memory', async (t) => {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const queue = await openFileEventQueue({ dir: await newDir() })
  t.after(() => queue.close())
  let consumed = 0
  queue.consume(async (m) => void (consumed += m.length), { maxBatch: 10_000, maxWaitMs: 1 })
  gc()
  const before = process.memoryUsage().heapUsed
  // 800 publishes (fewer than the tail compacts its chunk list after) of 100 distinct 1 KB messages:
  // 80 MB through the in-memory tail, consumed as it goes.
  for (let p = 0; p < 800; p++) {
    await queue.publish(Array.from({ length: 100 }, (_, i) => `${p}-${i}-`.padEnd(1000, 'x')))
  }
  assert.equal(await queue.drain(10_000), true)
  assert.equal(consumed, 80_000)
  gc()
  const retainedMb = (process.memoryUsage().heapUsed - before) / 1024 / 1024
  assert.ok(retainedMb < 20, `${retainedMb.toFixed(0)} MB of the consumed messages still in the heap`)
})
