import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, test } from 'node:test'
import { connect } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'
import { eventQueueContract } from '../../test/contracts/event-queue.contract.ts'
import { openNatsEventQueue } from './nats-event-queue.ts'
import { QueueFullError, type EventQueue } from './event-queue.ts'
import { eventually } from '../../test/helpers/eventually.ts'
import { hasNatsServer, startOwnNatsServer } from '../../test/helpers/nats-server.ts'
import { startNatsCluster } from '../../test/helpers/nats-cluster.ts'

const url = process.env.TEST_NATS_URL
const servers = (url ?? '').split(',')
const run = `T${process.pid}_${Date.now()}`
const streams: string[] = []
let n = 0
const newStream = async () => {
  const name = `${run}_${++n}`
  streams.push(name)
  return name
}
if (!url) {
  console.log('# NATS event queue tests skipped: set TEST_NATS_URL (e.g. nats://127.0.0.1:4222, a server with -js)')
  test('NATS event queue contract', { skip: 'TEST_NATS_URL is not set' }, () => {})
} else {
  // Each test's stream is deleted afterwards: the shared server keeps nothing of this run.
  after(async () => {
    const nc = await connect({ servers })
    const jsm = await jetstreamManager(nc)
    for (const s of streams) await jsm.streams.delete(s).catch(() => undefined)
    await nc.close()
  })
  eventQueueContract('NATS queue', (stream) => openNatsEventQueue({ servers, stream, ackWaitMs: 2000 }), newStream)
}

/** Collects what a queue's consumer is handed until `count` events have arrived. */
function collectAll(queue: EventQueue, count: number) {
  const got: string[] = []
  let done!: () => void
  const finished = new Promise<void>((resolve) => (done = resolve))
  queue.consume(
    async (messages) => {
      got.push(...messages)
      if (got.length >= count) done()
    },
    { maxBatch: 1000, maxWaitMs: 1, retryDelayMs: 5 },
  )
  return { got, finished }
}

test('NATS queue: messages a killed worker held are delivered again to another worker, once the ack wait has passed', { skip: !url && 'TEST_NATS_URL is not set', timeout: 60_000 }, async (t) => {
  const stream = await newStream()
  const queue = await openNatsEventQueue({ servers, stream, ackWaitMs: 1000 })
  t.after(() => queue.close())
  await queue.publish(['k-0', 'k-1', 'k-2'])
  const worker = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/nats-holding-worker.ts', servers.join(','), stream, '1000'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => worker.once('exit', resolve))
  t.after(() => worker.kill('SIGKILL'))
  await new Promise<void>((resolve) => worker.stdout!.on('data', (c: Buffer) => c.toString().includes('holding 3') && resolve()))
  const { got, finished } = collectAll(queue, 3)
  worker.kill('SIGKILL')
  await exited
  await finished
  assert.deepEqual(got, ['k-0', 'k-1', 'k-2'])
})

test('NATS queue: a batch whose handler keeps failing stays with its worker, in progress, past the ack wait', { skip: !url && 'TEST_NATS_URL is not set', timeout: 60_000 }, async (t) => {
  const stream = await newStream()
  const a = await openNatsEventQueue({ servers, stream, ackWaitMs: 1000 })
  const b = await openNatsEventQueue({ servers, stream, ackWaitMs: 1000 })
  t.after(() => Promise.all([a.close(), b.close()]))
  await a.publish(['w-0', 'w-1', 'w-2'])
  const handledByA: string[] = []
  let failUntil = performance.now() + 3500
  a.consume(
    async (messages) => {
      if (performance.now() < failUntil) throw new Error('store down')
      handledByA.push(...messages)
    },
    { maxBatch: 1000, maxWaitMs: 1, retryDelayMs: 200, retryMaxDelayMs: 200 },
  )
  await eventually(async () => a.stats().failedBatches > 0)
  const other = collectAll(b, 1)
  await eventually(async () => handledByA.length >= 3, 100, 100)
  // One more ack wait: a message that went back to JetStream meanwhile would show up now, twice or at b.
  await new Promise((r) => setTimeout(r, 2500))
  failUntil = 0
  assert.deepEqual(other.got, [], 'another worker got messages held by a live one')
  assert.deepEqual(handledByA, ['w-0', 'w-1', 'w-2'])
})

test('NATS queue: a stream at its byte limit refuses publishes with QueueFullError, and /_ready-state says why until the workers catch up', { skip: !url && 'TEST_NATS_URL is not set' }, async (t) => {
  const queue = await openNatsEventQueue({ servers, stream: await newStream(), maxBacklogBytes: 2048 })
  t.after(() => queue.close())
  await queue.publish(['x'.repeat(1500)])
  await assert.rejects(queue.publish(['y'.repeat(1500)]), QueueFullError)
  assert.equal(queue.writeState().writable, false)
  assert.match(queue.writeState().reason ?? '', /full/)
  const { finished } = collectAll(queue, 1)
  await finished
  await eventually(async () => queue.writeState().writable)
  await queue.publish(['z'.repeat(1500)])
})

test('NATS queue: with the server stopped publishes fail and the write state names NATS; after a restart both work again and nothing is lost', { skip: (!url || !hasNatsServer) && 'needs TEST_NATS_URL and nats-server', timeout: 60_000 }, async (t) => {
  const nats = await startOwnNatsServer(t)
  const queue = await openNatsEventQueue({ servers: [nats.url], stream: 'OUTAGE', ackWaitMs: 1000, publishTimeoutMs: 1000 })
  t.after(() => queue.close())
  await queue.publish(['before'])
  await nats.stop()
  await eventually(async () => !queue.writeState().writable)
  assert.match(queue.writeState().reason ?? '', /NATS/)
  await assert.rejects(queue.publish(['during']))
  await nats.start()
  await eventually(async () => queue.writeState().writable)
  await queue.publish(['after'])
  const { got, finished } = collectAll(queue, 2)
  await finished
  assert.deepEqual(got, ['before', 'after'])
})

test('NATS queue: a process that opens the queue while the cluster has no JetStream leader waits for it instead of failing', { skip: !hasNatsServer && 'nats-server is not installed', timeout: 120_000 }, async (t) => {
  const cluster = await startNatsCluster(3)
  t.after(() => cluster.destroy())
  const [alone, ...others] = cluster.nodes
  // One node of three has no quorum: JetStream's API requests time out or answer "temporarily unavailable".
  await Promise.all(others.map((node) => node!.kill9()))
  const opening = openNatsEventQueue({ servers: [alone!.url], stream: 'ELECTING', replicas: 3, publishTimeoutMs: 1000, openTimeoutMs: 90_000 })
  let settled = false
  void opening.then(() => (settled = true), () => (settled = true))
  // Longer than one management request's timeout (10 s): a single try would have failed by now.
  await new Promise((r) => setTimeout(r, 12_000))
  assert.equal(settled, false, 'opening gave up (or succeeded) while the cluster could not elect a leader')
  await Promise.all(others.map((node) => node!.start()))
  const queue = await opening
  t.after(() => queue.close())
  await queue.publish(['after-election'])
  const { got, finished } = collectAll(queue, 1)
  await finished
  assert.deepEqual(got, ['after-election'])
})
