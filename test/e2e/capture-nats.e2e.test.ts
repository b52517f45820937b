import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { PostHog } from 'posthog-node'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { readAllEvents, waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { someEvents } from '../helpers/ingestion-outage.ts'
import { hasNatsServer, natsQueueEnv, startOwnNatsServer, TEST_NATS_URL } from '../helpers/nats-server.ts'

const FAST_RETRY = { TALLY_INGEST_RETRY_MIN_MS: '20', TALLY_INGEST_RETRY_MAX_MS: '200', TALLY_PERSON_CACHE_WARM: 'false' }

async function sendBatch(app: TestApp, batch: unknown[]) {
  return app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
}

/** Every stored event's uuid must be one that was sent, and each exactly once. */
function assertStoredOnce(stored: string[], sent: string[]) {
  assert.equal(new Set(stored).size, stored.length, 'an event was stored twice')
  assert.deepEqual([...stored].sort(), [...sent].sort())
}

testOnEachEngine('capture on NATS: posthog-node and raw HTTP events are each stored once', async (t, engine) => {
  const app = await buildTestApp(t, { engine, env: { ...FAST_RETRY, ...natsQueueEnv(t) } })
  const host = await app.http.listen({ host: '127.0.0.1', port: 0 })
  const client = new PostHog(app.projectKey, { host, flushAt: 50, flushInterval: 0, fetchRetryCount: 0 })
  for (let i = 0; i < 300; i++) client.capture({ distinctId: `user-${i % 7}`, event: 'node_event', properties: { i } })
  await client.shutdown()
  const raw = someEvents('raw_event', 200)
  for (let i = 0; i < raw.length; i += 50) {
    const res = await fetch(`${host}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: app.projectKey, batch: raw.slice(i, i + 50) }) })
    assert.equal(res.status, 200)
  }
  const single = await fetch(`${host}/e/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: app.projectKey, ...someEvents('single_event', 1)[0] }) })
  assert.equal(single.status, 200)

  const nodeEvents = await waitForEvents(app, 300, { event: 'node_event' })
  assert.deepEqual(nodeEvents.map((e) => e.properties.i as number).sort((a, b) => a - b), Array.from({ length: 300 }, (_, i) => i))
  assertStoredOnce((await waitForEvents(app, 200, { event: 'raw_event' })).map((e) => e.id), raw.map((e) => e.uuid))
  assert.equal((await waitForEvents(app, 1, { event: 'single_event' })).length, 1)
  const metrics = (await app.http.inject({ method: 'GET', url: '/_metrics' })).body
  assert.match(metrics, /tally_queue_published_total 501/)
}, { skip: !TEST_NATS_URL && 'TEST_NATS_URL is not set', timeout: 120_000 })

testOnEachEngine('capture on NATS: with NATS stopped capture answers 503 + Retry-After and /_ready names NATS; restarted, ingestion resumes and nothing is lost or doubled', async (t, engine) => {
  const nats = await startOwnNatsServer(t)
  const app = await buildTestApp(t, { engine, env: { ...FAST_RETRY, ...natsQueueEnv(t, nats.url), TALLY_NATS_PUBLISH_TIMEOUT_MS: '1000' } })
  const accepted: string[] = []
  const refused: Array<ReturnType<typeof someEvents>> = []
  const send = async (batch: ReturnType<typeof someEvents>) => {
    const res = await sendBatch(app, batch)
    if (res.statusCode === 200) accepted.push(...batch.map((e) => e.uuid))
    else {
      assert.equal(res.statusCode, 503, res.body)
      assert.ok(Number(res.headers['retry-after']) > 0, 'a 503 without Retry-After')
      refused.push(batch)
    }
    return res.statusCode
  }
  for (let r = 0; r < 5; r++) assert.equal(await send(someEvents('before', 20)), 200)

  await nats.stop()
  await eventually(async () => (await send(someEvents('during', 20))) === 503)
  for (let r = 0; r < 3; r++) assert.equal(await send(someEvents('during', 20)), 503, 'a 200 while NATS is away')
  const ready = await app.http.inject({ method: 'GET', url: '/_ready' })
  assert.equal(ready.statusCode, 503)
  const body = ready.json() as { status: string; ingestion: { components: { queue?: { reason: string } } } }
  assert.equal(body.status, 'ingestion_blocked')
  assert.match(body.ingestion.components.queue?.reason ?? '', /NATS/)
  const storedDuring = await readAllEvents(app, { event: 'during' })
  assert.equal(storedDuring.length, 0, 'an event answered 503 was stored')

  await nats.start()
  await eventually(async () => (await app.http.inject({ method: 'GET', url: '/_ready' })).statusCode === 200)
  // The SDKs send what got a 503 again; new events flow too.
  for (const batch of refused.splice(0)) assert.equal(await send(batch), 200)
  for (let r = 0; r < 5; r++) assert.equal(await send(someEvents('after', 20)), 200)
  const stored = await eventually(async () => {
    const events = await readAllEvents(app)
    return events.length >= accepted.length && events
  })
  assertStoredOnce(stored.map((e) => e.id), accepted)
}, { skip: (!TEST_NATS_URL || !hasNatsServer) && 'needs TEST_NATS_URL and nats-server', timeout: 120_000 })
