import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { EventQueue } from '../../src/queue/event-queue.ts'

/**
 * Opens a queue on `location` (a directory, a stream name...). Opening the same location again must
 * give back the same queue, as after a restart.
 */
export type OpenQueue = (location: string) => Promise<EventQueue>

/** Collects delivered batches until `count` messages have arrived. */
function collect(queue: EventQueue, count: number, opts: { maxBatch?: number; maxWaitMs?: number; failFirst?: number } = {}) {
  const batches: string[][] = []
  let failuresLeft = opts.failFirst ?? 0
  let seen = 0
  let done!: () => void
  const finished = new Promise<void>((resolve) => (done = resolve))
  queue.consume(
    async (messages) => {
      if (failuresLeft > 0) {
        failuresLeft--
        throw new Error('handler failure')
      }
      batches.push(messages)
      seen += messages.length
      if (seen >= count) done()
    },
    { maxBatch: opts.maxBatch ?? 1000, maxWaitMs: opts.maxWaitMs ?? 1, retryDelayMs: 5 },
  )
  return { batches, finished }
}

/** The linger tests wait ten minutes when the behaviour is wrong: they fail at this bound instead. */
const LINGER_TEST_TIMEOUT_MS = 30_000

const messages = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`)

/** The behaviour every EventQueue adapter shares (embedded segment log, JetStream...). */
export function eventQueueContract(name: string, open: OpenQueue, newLocation: () => Promise<string>): void {
  test(`${name}: delivers published messages in publish order`, async (t) => {
    const queue = await open(await newLocation())
    t.after(() => queue.close())
    await queue.publish(messages('a', 50))
    await queue.publish(messages('b', 50))
    const { batches, finished } = collect(queue, 100)
    await finished
    assert.deepEqual(batches.flat(), [...messages('a', 50), ...messages('b', 50)])
  })

  test(`${name}: hands out batches of at most maxBatch messages`, async (t) => {
    const queue = await open(await newLocation())
    t.after(() => queue.close())
    await queue.publish(messages('m', 95))
    const { batches, finished } = collect(queue, 95, { maxBatch: 10 })
    await finished
    assert.ok(batches.every((b) => b.length <= 10))
    assert.equal(batches.flat().length, 95)
  })

  test(`${name}: delivers messages published while the consumer waits`, async (t) => {
    const queue = await open(await newLocation())
    t.after(() => queue.close())
    const { batches, finished } = collect(queue, 3)
    await queue.publish(['x'])
    await queue.publish(['y', 'z'])
    await finished
    assert.deepEqual(batches.flat(), ['x', 'y', 'z'])
  })

  test(`${name}: delivers a batch again, in order, after its handler failed`, async (t) => {
    const queue = await open(await newLocation())
    t.after(() => queue.close())
    await queue.publish(messages('r', 20))
    const { batches, finished } = collect(queue, 20, { failFirst: 2 })
    await finished
    assert.deepEqual(batches.flat(), messages('r', 20))
    assert.equal(queue.stats().failedBatches, 2)
  })

  test(`${name}: delivers unacknowledged messages again after a restart`, async (t) => {
    const location = await newLocation()
    const first = await open(location)
    await first.publish(messages('p', 30))
    await first.close()
    const second = await open(location)
    t.after(() => second.close())
    const { batches, finished } = collect(second, 30)
    await finished
    assert.deepEqual(batches.flat(), messages('p', 30))
  })

  test(`${name}: does not deliver acknowledged messages again after a restart`, async (t) => {
    const location = await newLocation()
    const first = await open(location)
    await first.publish(messages('old', 10))
    const { finished } = collect(first, 10)
    await finished
    assert.equal(await first.drain(5000), true)
    await first.close()
    const second = await open(location)
    t.after(() => second.close())
    await second.publish(messages('new', 5))
    const got = collect(second, 5)
    await got.finished
    assert.deepEqual(got.batches.flat(), messages('new', 5))
  })

  test(`${name}: drain resolves true once everything published is acknowledged`, async (t) => {
    const queue = await open(await newLocation())
    t.after(() => queue.close())
    collect(queue, 40)
    await Promise.all([queue.publish(messages('d', 20)), queue.publish(messages('e', 20))])
    assert.equal(await queue.drain(5000), true)
    assert.equal(queue.stats().acked, 40)
  })

  test(`${name}: keeps messages with multi-byte characters intact`, async (t) => {
    const queue = await open(await newLocation())
    t.after(() => queue.close())
    const sent = ['{"e":"café ☕"}', '{"e":"日本語"}', '{"e":"😀"}']
    await queue.publish(sent)
    const { batches, finished } = collect(queue, 3)
    await finished
    assert.deepEqual(batches.flat(), sent)
  })

  test(`${name}: a batch waits for more messages until it is full or maxWaitMs has passed since its first`, { timeout: LINGER_TEST_TIMEOUT_MS }, async (t) => {
    const queue = await open(await newLocation())
    t.after(() => queue.close())
    // Lingering: three publishes far apart (for a queue) make one batch of three, not three batches.
    const full = collect(queue, 3, { maxBatch: 3, maxWaitMs: 600_000 })
    for (const m of ['l-0', 'l-1', 'l-2']) {
      await queue.publish([m])
      await new Promise((r) => setTimeout(r, 20))
    }
    await full.finished
    assert.deepEqual(full.batches, [['l-0', 'l-1', 'l-2']])
  })

  test(`${name}: a batch that does not fill is handed out once its first message has waited maxWaitMs`, { timeout: LINGER_TEST_TIMEOUT_MS }, async (t) => {
    const queue = await open(await newLocation())
    t.after(() => queue.close())
    const { batches, finished } = collect(queue, 1, { maxBatch: 1000, maxWaitMs: 30 })
    await queue.publish(['alone'])
    await finished
    assert.deepEqual(batches, [['alone']])
  })

  test(`${name}: drain does not wait for a lingering batch to fill`, { timeout: LINGER_TEST_TIMEOUT_MS }, async (t) => {
    const queue = await open(await newLocation())
    t.after(() => queue.close())
    const { batches } = collect(queue, 1, { maxBatch: 1000, maxWaitMs: 600_000 })
    await queue.publish(['draining'])
    assert.equal(await queue.drain(5000), true)
    assert.deepEqual(batches, [['draining']])
  })

  test(`${name}: what a restart left unacknowledged is delivered at once, new messages behind it too`, { timeout: LINGER_TEST_TIMEOUT_MS }, async (t) => {
    const location = await newLocation()
    const first = await open(location)
    await first.publish(['left-over'])
    await first.close()
    const second = await open(location)
    t.after(() => second.close())
    await second.publish(['new'])
    // A linger of ten minutes: only a delivery that does not wait for the batch to fill finishes.
    const { batches, finished } = collect(second, 2, { maxBatch: 1000, maxWaitMs: 600_000 })
    await finished
    assert.deepEqual(batches.flat(), ['left-over', 'new'])
  })
}
