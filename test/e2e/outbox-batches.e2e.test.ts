import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { aBrowserEvent, waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { startWebhookReceiver, type ReceivedRequest } from '../helpers/webhook-receiver.ts'
import { createTestDatabase, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'

/**
 * A micro-batch's messages for a destination are one outbox row, sent as one request each: when some
 * of them fail, only those are tried again (5xx) or dead-lettered (other 4xx), each under the key it
 * was first sent with; the rest are sent once. On the embedded PGlite and on PostgreSQL (leases).
 */
const ALLOW_LOOPBACK = { TALLY_WEBHOOK_ALLOW: '127.0.0.1', TALLY_WEBHOOK_RETRY_MIN_MS: '50', TALLY_WEBHOOK_RETRY_MAX_MS: '200' }

const metastores: Array<[string, (t: TestContext) => Promise<Record<string, string>>, string | undefined]> = [
  ['pglite', async () => ({}), undefined],
  ['postgres', async (t) => ({ TALLY_DATABASE_URL: await createTestDatabase(t) }), TEST_POSTGRES_URL ? undefined : 'needs TEST_POSTGRES_URL'],
]

const uuidOf = (r: ReceivedRequest) => (JSON.parse(r.body) as { uuid: string }).uuid

for (const [metastore, env, skip] of metastores) {
  test(`outbox batches (${metastore}): a batch partly failing retries only its failed messages, each under its own key; a 400 is dead-lettered and replays`, { skip }, async (t) => {
    // kind=flaky answers 500 twice, then 200; kind=bad answers 400; the rest 200 at once.
    const tries = new Map<string, number>()
    const receiver = await startWebhookReceiver(t, (r) => {
      const { uuid, kind } = JSON.parse(r.body) as { uuid: string; kind: string }
      const n = (tries.get(uuid) ?? 0) + 1
      tries.set(uuid, n)
      return kind === 'bad' ? 400 : kind === 'flaky' && n <= 2 ? 500 : 200
    })
    const app = await buildTestApp(t, { env: { ...ALLOW_LOOPBACK, ...(await env(t)) } })
    const api = privateApi(app)
    const d = (await api.post('/destinations/', { name: 'mixed', url: receiver.url(), body_template: '{"uuid": {event.uuid}, "kind": {event.properties.kind}}' })).json()
    const kinds = ['ok', 'flaky', 'ok', 'bad', 'ok', 'flaky', 'ok', 'ok', 'bad', 'flaky']
    const events = kinds.map((kind, i) => aBrowserEvent(app.projectKey, { uuid: crypto.randomUUID(), event: 'e', properties: { distinct_id: `u${i}`, kind } }))
    const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch: events } })
    assert.equal(res.statusCode, 200)
    await waitForEvents(app, events.length)

    const deliveries = await eventually(async () => {
      const rows = (await api.get(`/destinations/${d.id}/deliveries/`)).json().results as Array<Record<string, any>>
      return rows.length === events.length && rows.every((r) => r.status !== 'pending') && rows
    }, 600)
    const byKey = new Map(deliveries.map((r) => [r.idempotency_key, r]))
    const perUuid = new Map<string, ReceivedRequest[]>()
    for (const r of receiver.requests) perUuid.set(uuidOf(r), [...(perUuid.get(uuidOf(r)) ?? []), r])
    events.forEach((e, i) => {
      const kind = kinds[i]!
      const got = perUuid.get(String(e.uuid)) ?? []
      const key = `destination:${d.id}:${e.uuid}`
      assert.equal(got.length, kind === 'flaky' ? 3 : 1, `${kind} event ${i}: ${got.length} requests`)
      assert.deepEqual(new Set(got.map((r) => r.headers['idempotency-key'])), new Set([key]), `${kind} event ${i} keeps its key across tries`)
      const row = byKey.get(key)
      assert.ok(row, `a delivery for ${key}`)
      if (kind === 'bad') assert.deepEqual([row.status, row.attempts, row.response_status], ['failed', 1, 400])
      else if (kind === 'flaky') assert.deepEqual([row.status, row.attempts, row.response_status], ['sent', 3, 200])
      else assert.deepEqual([row.status, row.attempts, row.response_status], ['sent', 1, 200])
    })

    // The dead letters replay under their keys; nothing else is sent again.
    assert.deepEqual((await api.post(`/destinations/${d.id}/replay/`)).json(), { replayed: 2 })
    const bad = events.filter((_, i) => kinds[i] === 'bad').map((e) => String(e.uuid))
    await eventually(async () => bad.every((u) => perUuid.get(u) && receiver.requests.filter((r) => uuidOf(r) === u).length === 2), 600)
    await new Promise((r) => setTimeout(r, 300))
    assert.equal(receiver.requests.length, 5 * 1 + 3 * 3 + 2 * 2, 'ok once, flaky three times, bad twice (a try and a replay)')
  })
}

test('outbox batches: destinations on one host share its connection pool (at most the concurrency of connections to it)', async (t) => {
  // The receiver holds each request a moment, so both channels have their concurrency in flight at once.
  const receiver = await startWebhookReceiver(t, () => new Promise((resolve) => setTimeout(() => resolve(200), 20)))
  const app = await buildTestApp(t, { env: { ...ALLOW_LOOPBACK, TALLY_WEBHOOK_CONCURRENCY: '2' } })
  const api = privateApi(app)
  for (const name of ['warehouse', 'crm']) {
    assert.equal((await api.post('/destinations/', { name, url: receiver.url(`/${name}`), body_template: '{"uuid": {event.uuid}}' })).statusCode, 201)
  }
  const events = Array.from({ length: 40 }, (_, i) => aBrowserEvent(app.projectKey, { event: 'e', properties: { distinct_id: `u${i}` } }))
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch: events } })
  assert.equal(res.statusCode, 200)
  await eventually(async () => receiver.requests.length >= 2 * events.length, 600)
  for (const path of ['/warehouse', '/crm']) assert.equal(receiver.requests.filter((r) => r.path === path).length, events.length, path)
  assert.ok(receiver.connections() <= 2, `two destinations on one origin opened ${receiver.connections()} connections`)
  assert.equal(receiver.maxInFlight(), 2, 'the pool\'s connections are busy at once')
})
