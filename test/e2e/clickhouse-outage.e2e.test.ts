import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateClickHouse, skipWithoutClickHouse } from '../helpers/clickhouse.ts'
import { readAllEvents } from '../helpers/capture-helpers.ts'
import { privateApi } from '../helpers/private-api.ts'
import { postQuery } from '../helpers/query-data.ts'
import { eventually } from '../helpers/eventually.ts'

// A ClickHouse server of this test's own (not CI's shared one): it is stopped and started again.
const skip = skipWithoutClickHouse()

test('ClickHouse down: capture goes on, /_ready says so, reads and queries are 503 with Retry-After; the worker retries whole batches and stores each event once after, none dead-lettered', { skip, timeout: 180_000 }, async (t) => {
  const server = await privateClickHouse()
  t.after(() => server.destroy())
  const app = await buildTestApp(t, {
    env: { TALLY_CLICKHOUSE_URL: `${server.url}/outage`, TALLY_INGEST_RETRY_MIN_MS: '20', TALLY_INGEST_RETRY_MAX_MS: '200' },
  })
  const send = (uuids: string[]) =>
    app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch: uuids.map((uuid, i) => ({ uuid, event: 'e', distinct_id: `u${i}` })) } })
  const first = [randomUUID()]
  assert.equal((await send(first)).statusCode, 200)
  await eventually(async () => (await readAllEvents(app)).length === 1)
  assert.equal((await app.http.inject({ url: '/_ready' })).statusCode, 200)

  await server.stop()
  const later = Array.from({ length: 20 }, () => randomUUID())
  assert.equal((await send(later)).statusCode, 200, 'capture needs only the local queue')
  const ready = await app.http.inject({ url: '/_ready' })
  assert.equal(ready.statusCode, 503)
  assert.equal(ready.json().status, 'store_unavailable')
  const down = [
    await app.http.inject({ url: `/api/projects/${app.projectId}/events/`, headers: app.auth }),
    await postQuery(app, { kind: 'EventsQuery', select: ['event'], limit: 5 }),
    await postQuery(app, { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'e' }], dateRange: { date_from: '-7d' } }),
    await postQuery(app, { kind: 'HogQLQuery', query: 'select event, count() from events group by event' }),
  ]
  for (const res of down) {
    assert.equal(res.statusCode, 503, res.body)
    assert.equal(res.json().code, 'service_unavailable')
    assert.equal(res.headers['retry-after'], '5')
  }
  // Let the worker fail and retry a few times while the server is away.
  await new Promise((r) => setTimeout(r, 1500))

  await server.start()
  const stored = await eventually(async () => {
    const events = await readAllEvents(app).catch(() => [])
    return events.length >= 21 && events
  }, 300, 200)
  assert.deepEqual(stored.map((e) => e.id).sort(), [...first, ...later].sort(), 'every event stored exactly once')
  assert.equal((await privateApi(app).get('/dead_letters/')).json().count, 0, 'nothing dead-lettered for an outage')
  assert.equal((await app.http.inject({ url: '/_ready' })).statusCode, 200)
  const back = await postQuery(app, { kind: 'HogQLQuery', query: 'select event, count() from events group by event' })
  assert.equal(back.statusCode, 200, back.body)
  assert.deepEqual(back.json().results, [['e', 21]])
})
