import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { EventStore } from '../../src/ingestion/event-store.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { readAllEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { capturedLogger, readDeadLetters, someEvents } from '../helpers/ingestion-outage.ts'
import { queryOk, waitForStored } from '../helpers/query-data.ts'

const LIMIT = 64 * 1024
const ENV = {
  TALLY_QUEUE_MAX_BACKLOG_BYTES: String(LIMIT),
  TALLY_MAX_BATCH_EVENTS: '20',
  TALLY_PERSON_CACHE_WARM: 'false',
}
const FULL_BODY = { type: 'server_error', code: 'service_unavailable', detail: 'Too many events are waiting to be processed; retry later.', attr: null }

/**
 * The event store as the worker sees it, held back by the test: each insertBatch waits for a permit
 * (`allow(n)` hands out n, `open()` lets everything through from then on).
 */
function heldStore() {
  let permits = 0
  let opened = false
  let wake: (() => void) | null = null
  const wrap = (inner: EventStore): EventStore => ({
    async insertBatch(events) {
      while (!opened && permits === 0) await new Promise<void>((r) => (wake = r))
      if (!opened) permits--
      return inner.insertBatch(events)
    },
    close: () => inner.close(),
  })
  const poke = () => {
    const w = wake
    wake = null
    w?.()
  }
  return {
    wrap,
    allow(n: number) {
      permits += n
      poke()
    },
    open() {
      opened = true
      poke()
    },
  }
}

/** Twenty events of ~400 bytes in one /batch/ (fresh uuids each call). */
async function sendBatch(app: TestApp, name: string) {
  const batch = someEvents(name, 20).map((e) => ({ ...e, properties: { ...e.properties, pad: 'p'.repeat(300) } }))
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  return { res, uuids: batch.map((e) => e.uuid) }
}

async function metric(app: TestApp, name: string): Promise<number> {
  const text = (await app.http.inject({ method: 'GET', url: '/_metrics' })).body
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)
  assert.ok(m, `${name} in /_metrics`)
  return Number(m[1])
}

async function storedCount(app: TestApp, event: string): Promise<number> {
  const body = await queryOk(app, { kind: 'EventsQuery', select: ['count()'], event })
  return Number(body.results[0]?.[0] ?? 0)
}

test('past the backlog limit every capture path answers 503 with Retry-After and writes nothing; after the worker catches up capture answers 200 again and every acknowledged event is stored once', async (t) => {
  const store = heldStore()
  // A failed assertion must not leave the worker held: closing the app waits for its batch.
  t.after(() => store.open())
  const { logger, lines } = capturedLogger()
  const app = await buildTestApp(t, { env: ENV, logger, wrapEventStore: store.wrap })

  const acked: string[] = []
  const refused: string[] = []
  let first503: Awaited<ReturnType<typeof sendBatch>>['res'] | null = null
  for (let i = 0; i < 100 && !first503; i++) {
    const { res, uuids } = await sendBatch(app, 'held')
    if (res.statusCode === 200) acked.push(...uuids)
    else {
      assert.equal(res.statusCode, 503, res.body)
      refused.push(...uuids)
      first503 = res
    }
  }
  assert.ok(first503, 'capture refuses once the backlog reaches its limit')
  assert.ok(acked.length > 0, 'capture accepted events before the limit')
  assert.equal(first503.headers['retry-after'], '5')
  assert.deepEqual(first503.json(), FULL_BODY)

  const backlogBytes = await metric(app, 'tally_queue_backlog_bytes')
  assert.ok(backlogBytes > LIMIT - 16 * 1024 && backlogBytes <= LIMIT, `backlog ${backlogBytes} bytes, limit ${LIMIT}`)

  // Every capture path refuses while the worker is held, even a single small event that would fit
  // in the room left (until the worker brings the backlog under 90 % of the limit), none with a 200.
  const one = () => ({ event: 'held', distinct_id: 'd1', uuid: crypto.randomUUID(), properties: { pad: 'q'.repeat(300) } })
  for (const url of ['/e/', '/e', '/capture/', '/i/v0/e/', '/track/', '/batch']) {
    const e = one()
    const res = await app.http.inject({ method: 'POST', url, payload: { api_key: app.projectKey, ...e } })
    assert.equal(res.statusCode, 503, `${url}: ${res.body}`)
    assert.equal(res.headers['retry-after'], '5', url)
    assert.deepEqual(res.json(), FULL_BODY, url)
    refused.push(e.uuid)
  }
  const data = Buffer.from(JSON.stringify({ ...one(), event: '$identify', api_key: app.projectKey })).toString('base64')
  const engage = await app.http.inject({ method: 'GET', url: `/engage/?data=${encodeURIComponent(data)}` })
  assert.equal(engage.statusCode, 503, engage.body)
  assert.equal(engage.headers['retry-after'], '5')
  assert.equal(await metric(app, 'tally_queue_backlog_bytes'), backlogBytes, 'refused requests wrote nothing')
  const metrics = (await app.http.inject({ method: 'GET', url: '/_metrics' })).body
  assert.match(metrics, /^tally_ingestion_events_total\{outcome="refused",reason="backlog_full"\} 27$/m)
  // /_ready stays 200: the process serves /decide and the backlog is not an outage.
  assert.equal((await app.http.inject({ method: 'GET', url: '/_ready' })).statusCode, 200)

  store.open()
  // Capture answers 200 again once the worker has caught up.
  await eventually(async () => {
    const { res, uuids } = await sendBatch(app, 'held')
    if (res.statusCode === 200) acked.push(...uuids)
    else refused.push(...uuids)
    return res.statusCode === 200
  })
  // Once the backlog is empty again, a batch goes straight in.
  await eventually(async () => (await metric(app, 'tally_queue_backlog_bytes')) === 0)
  const after = await sendBatch(app, 'held')
  assert.equal(after.res.statusCode, 200)
  acked.push(...after.uuids)

  await waitForStored(app, acked.length)
  assert.equal(await storedCount(app, 'held'), acked.length, 'the query API counts exactly the acknowledged events')
  const stored = await readAllEvents(app)
  assert.deepEqual(new Set(stored.map((e) => e.id)), new Set(acked), 'stored: the acknowledged events, none of the refused ones')
  assert.equal(stored.length, acked.length)

  const queueLines = lines.filter((l) => l.module === 'queue').map((l) => String(l.msg))
  assert.equal(queueLines.filter((m) => m.startsWith('event queue backlog at its limit')).length, 1, queueLines.join(' | '))
  assert.equal(queueLines.filter((m) => m.startsWith('event queue backlog below its limit again')).length, 1, queueLines.join(' | '))
  await app.close()
  assert.deepEqual(await readDeadLetters(app.dataDir), [])
})

test('a slowed worker: an SDK that resends refused batches gets every event in, each stored once, and the backlog never passes the limit', async (t) => {
  const store = heldStore()
  t.after(() => store.open())
  const app = await buildTestApp(t, { env: ENV, wrapEventStore: store.wrap })
  const batches = Array.from({ length: 40 }, () =>
    someEvents('slowed', 20).map((e) => ({ ...e, properties: { ...e.properties, pad: 's'.repeat(300) } })),
  )
  let refusals = 0
  let maxBacklog = 0
  // Four SDK clients at once; the worker stores one batch for each refusal (it is slower than capture).
  const client = async (mine: typeof batches) => {
    for (const batch of mine) {
      for (;;) {
        const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
        maxBacklog = Math.max(maxBacklog, await metric(app, 'tally_queue_backlog_bytes'))
        if (res.statusCode === 200) break
        assert.equal(res.statusCode, 503, res.body)
        assert.equal(res.headers['retry-after'], '5')
        refusals++
        store.allow(1)
        await new Promise((r) => setTimeout(r, 5))
      }
    }
  }
  await Promise.all([0, 1, 2, 3].map((k) => client(batches.filter((_, i) => i % 4 === k))))
  store.open()
  const all = batches.flat().map((e) => e.uuid)
  assert.ok(refusals > 0, 'the held worker made capture refuse')
  assert.ok(maxBacklog <= LIMIT, `backlog peaked at ${maxBacklog} bytes, limit ${LIMIT}`)
  await waitForStored(app, all.length)
  assert.equal(await storedCount(app, 'slowed'), all.length)
  const stored = await readAllEvents(app)
  assert.deepEqual(new Set(stored.map((e) => e.id)), new Set(all))
  assert.equal(stored.length, all.length)
})
