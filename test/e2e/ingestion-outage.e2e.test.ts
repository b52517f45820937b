import assert from 'node:assert/strict'
import { test } from 'node:test'
import { testOnEachEngine } from '../helpers/engines.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { capturedLogger, readDeadLetters, someEvents, switchableStore } from '../helpers/ingestion-outage.ts'

const FAST_RETRY = { TALLY_INGEST_RETRY_MIN_MS: '20', TALLY_INGEST_RETRY_MAX_MS: '200', TALLY_PERSON_CACHE_WARM: 'false' }

async function sendBatch(app: TestApp, batch: unknown[]): Promise<number> {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  return res.statusCode
}

async function ready(app: TestApp): Promise<{ status: number; body: Record<string, any> }> {
  const res = await app.http.inject({ method: 'GET', url: '/_ready' })
  return { status: res.statusCode, body: res.json() }
}

testOnEachEngine('an event store that fails with I/O errors blocks ingestion (503 /_ready, one log line) and every acknowledged event is stored once afterwards, none dead-lettered', async (t, engine) => {
  let failing = true
  const store = switchableStore(() => (failing ? new Error('IO Error: Could not write file "events.duckdb.wal": No space left on device') : null))
  const { logger, lines } = capturedLogger()
  const app = await buildTestApp(t, { engine, env: FAST_RETRY, logger, wrapEventStore: store.wrap })

  const sent: string[] = []
  for (let r = 0; r < 20; r++) {
    const batch = someEvents('outage', 50)
    assert.equal(await sendBatch(app, batch), 200, 'the queue still takes events while the store is down')
    sent.push(...batch.map((e) => e.uuid))
  }
  const blocked = await eventually(async () => {
    const r = await ready(app)
    return r.status === 503 && r.body.ingestion?.blocked ? r : null
  })
  assert.equal(blocked.body.status, 'ingestion_blocked')
  assert.match(blocked.body.ingestion.reason, /IO Error/)
  assert.match(blocked.body.ingestion.components.event_store.reason, /No space left on device/)
  assert.ok(!Number.isNaN(Date.parse(blocked.body.ingestion.since)))
  assert.equal((await app.http.inject({ method: 'GET', url: '/_health' })).statusCode, 200, '/_health only says the process is up')
  assert.deepEqual(app.ingestionHealth().blocked, true)
  const metrics = (await app.http.inject({ method: 'GET', url: '/_metrics' })).body
  assert.match(metrics, /^tally_ingestion_blocked\{component="event_store"\} 1$/m)
  assert.match(metrics, /^tally_event_store_batch_seconds_count\{outcome="error"\} [1-9]/m)

  // Several whole-batch attempts fail, none event by event.
  await eventually(async () => store.calls.length >= 5, 200, 25)
  assert.deepEqual(store.calls.filter((n) => n === 1), [], 'no one-by-one pass while the store is down')

  failing = false
  const stored = await waitForEvents(app, sent.length, { event: 'outage' })
  assert.equal(stored.length, sent.length)
  assert.deepEqual(new Set(stored.map((e) => e.id)), new Set(sent))
  const after = await eventually(async () => {
    const r = await ready(app)
    return r.status === 200 ? r : null
  })
  assert.deepEqual(after.body, { status: 'ready', ingestion: { blocked: false, reason: null, since: null, components: {} }, stores: { metadata: 'ok', events: 'ok' } })

  const messages = lines.filter((l) => l.module === 'ingestion').map((l) => String(l.msg))
  assert.equal(messages.filter((m) => m.startsWith('ingestion blocked')).length, 1, `one line when it blocks: ${messages.join(' | ')}`)
  assert.equal(messages.filter((m) => m.startsWith('ingestion recovered')).length, 1, 'one line when it recovers')
  const recovered = lines.find((l) => String(l.msg).startsWith('ingestion recovered'))!
  assert.ok((recovered.failures as number) >= 5, 'the recovered line counts the failed attempts')

  await app.close()
  assert.deepEqual(await readDeadLetters(app.dataDir, app.config.storage.clickhouseUrl), [])
})

testOnEachEngine('an event the store refuses for its own content goes to dead letters and the rest of its batch is stored', async (t, engine) => {
  const store = switchableStore((batch) =>
    batch.some((e) => e.distinctId === 'poison') ? new Error('Conversion Error: Could not convert string "poison" to INT32') : null,
  )
  const app = await buildTestApp(t, { engine, env: FAST_RETRY, wrapEventStore: store.wrap })
  const batch = someEvents('mixed', 200, (i) => (i === 137 ? 'poison' : `user-${i}`))
  assert.equal(await sendBatch(app, batch), 200)
  const stored = await waitForEvents(app, 199, { event: 'mixed' })
  assert.deepEqual(new Set(stored.map((e) => e.id)), new Set(batch.filter((_, i) => i !== 137).map((e) => e.uuid)))
  // Split in halves: a handful of store calls, not one per event.
  assert.ok(store.calls.length < 40, `store calls: ${store.calls.length}`)
  assert.equal((await ready(app)).status, 200)
  await app.close()
  const letters = await readDeadLetters(app.dataDir, app.config.storage.clickhouseUrl)
  assert.deepEqual(letters, [{ uuid: batch[137]!.uuid, step: 'store_events', reason: 'step_threw' }])
})

testOnEachEngine('an event that keeps failing with an unclassified error is isolated after the configured attempts instead of blocking ingestion', async (t, engine) => {
  const store = switchableStore((batch) => (batch.some((e) => e.distinctId === 'poison') ? new Error('something odd happened') : null))
  const app = await buildTestApp(t, { engine, env: { ...FAST_RETRY, TALLY_INGEST_ISOLATE_AFTER: '3' }, wrapEventStore: store.wrap })
  const batch = someEvents('odd', 50, (i) => (i === 0 ? 'poison' : `user-${i}`))
  assert.equal(await sendBatch(app, batch), 200)
  await waitForEvents(app, 49, { event: 'odd' })
  // Three whole deliveries failed before the split.
  assert.deepEqual(store.calls.slice(0, 3), [50, 50, 50])
  await eventually(async () => (await ready(app)).status === 200)
  await app.close()
  const letters = await readDeadLetters(app.dataDir, app.config.storage.clickhouseUrl)
  assert.deepEqual(letters.map((l) => l.uuid), [batch[0]!.uuid])
})
