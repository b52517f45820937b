import assert from 'node:assert/strict'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { readAllEvents, waitForEvents } from '../helpers/capture-helpers.ts'
import { someEvents } from '../helpers/ingestion-outage.ts'
import { hasNatsServer, natsQueueEnv, startOwnNatsServer, TEST_NATS_URL } from '../helpers/nats-server.ts'

// A NATS server whose max_payload is 64 KiB (the default is 1 MiB): the limits are reached with small bodies.
const MAX_PAYLOAD = 65_536
const skip = (!TEST_NATS_URL || !hasNatsServer) && 'needs TEST_NATS_URL and nats-server'
const ENV = { TALLY_INGEST_RETRY_MIN_MS: '20', TALLY_INGEST_RETRY_MAX_MS: '200', TALLY_PERSON_CACHE_WARM: 'false' }

async function appOnSmallNats(t: import('node:test').TestContext, engine: Engine): Promise<TestApp> {
  const nats = await startOwnNatsServer(t, { config: `max_payload: ${MAX_PAYLOAD}\n` })
  return buildTestApp(t, { engine, env: { ...ENV, ...natsQueueEnv(t, nats.url) } })
}

/** An event whose properties alone are `bytes` long. */
function bigEvent(name: string, bytes: number) {
  return { ...someEvents(name, 1)[0]!, properties: { blob: 'x'.repeat(bytes) } }
}

testOnEachEngine('on NATS, a batch larger than max_payload is split into several messages: 200 and every event stored once', async (t, engine) => {
  const app = await appOnSmallNats(t, engine)
  // 120 events of ~2 KB: ~4 times max_payload in one request.
  const batch = someEvents('split', 120).map((e) => ({ ...e, properties: { i: e.properties.i, pad: 'p'.repeat(2000) } }))
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
  const stored = await waitForEvents(app, 120, { event: 'split' })
  assert.equal(new Set(stored.map((e) => e.id)).size, stored.length, 'an event was stored twice')
  assert.deepEqual(stored.map((e) => e.id).sort(), batch.map((e) => e.uuid).sort())
  const metrics = (await app.http.inject({ method: 'GET', url: '/_metrics' })).body
  const flushes = Number(/tally_queue_flushes_total (\d+)/.exec(metrics)?.[1])
  assert.ok(flushes >= 4, `expected the request in at least 4 messages, got ${flushes}`)
}, { skip, timeout: 120_000 })

testOnEachEngine('on NATS, an event larger than max_payload is refused whole with 413 in PostHog\'s error shape; the queue stays writable', async (t, engine) => {
  const app = await appOnSmallNats(t, engine)
  const batch = [...someEvents('with_big', 10), bigEvent('with_big', MAX_PAYLOAD + 10_000), ...someEvents('with_big', 10)]
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 413, res.body)
  const body = res.json() as { type: string; code: string; detail: string; attr: unknown }
  assert.deepEqual({ type: body.type, code: body.code, attr: body.attr }, { type: 'client_error', code: 'request_too_large', attr: null })
  assert.match(body.detail, /max_payload/)
  assert.equal(res.headers['retry-after'], undefined, 'a 413 must not ask the SDK to retry')

  // The single-event endpoint answers the same.
  const single = await app.http.inject({ method: 'POST', url: '/e/', payload: { api_key: app.projectKey, ...bigEvent('single_big', MAX_PAYLOAD * 2) } })
  assert.equal(single.statusCode, 413, single.body)

  // Nothing was queued, NATS is not marked away, and the next request goes through.
  assert.equal((await app.http.inject({ method: 'GET', url: '/_ready' })).statusCode, 200)
  const after = someEvents('after_big', 5)
  assert.equal((await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch: after } })).statusCode, 200)
  await waitForEvents(app, 5, { event: 'after_big' })
  assert.equal((await readAllEvents(app, { event: 'with_big' })).length, 0, 'an event of the refused request was stored')
  assert.equal((await readAllEvents(app, { event: 'single_big' })).length, 0)
}, { skip, timeout: 120_000 })
