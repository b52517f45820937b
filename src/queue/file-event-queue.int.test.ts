import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, test } from 'node:test'
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
