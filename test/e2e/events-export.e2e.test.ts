import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { EventStore, StoredEvent } from '../../src/ingestion/event-store.ts'
import { testOnEachEngine } from '../helpers/engines.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { readAllEvents } from '../helpers/capture-helpers.ts'
import { captureVariedEvents, expected, readBackExport } from '../helpers/export-readback.ts'
import { strangerWithProject } from '../helpers/private-api.ts'
import { eventually } from '../helpers/eventually.ts'
import { clickHouseStatement } from '../helpers/clickhouse.ts'

const FORMATS = ['parquet', 'csv', 'ndjson'] as const

async function exportBytes(app: TestApp, query: string, headers = app.auth) {
  return app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/export?${query}`, headers })
}

testOnEachEngine('an export in each format reads back with DuckDB row for row as the events API shows the events', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureVariedEvents(app)
  const want = expected(await readAllEvents(app))
  for (const format of FORMATS) {
    const res = await exportBytes(app, `format=${format}`)
    assert.equal(res.statusCode, 200, res.body)
    assert.match(String(res.headers['content-disposition']), new RegExp(`attachment; filename="events-${app.projectId}\\.${format}"`))
    const got = await readBackExport(t, res.rawPayload, format)
    assert.equal(got.length, want.length, format)
    for (let i = 0; i < want.length; i++) assert.deepEqual(got[i], want[i], `${format} row ${i}`)
  }
})

testOnEachEngine("an export takes the events API's filters and answers a bad format with a 400 naming it", async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureVariedEvents(app)
  const filters = {
    event: 'signed up',
    after: '2024-05-02T00:00:00Z',
    before: '2024-05-06T00:00:00Z',
    properties: JSON.stringify([{ key: 'n', value: 8, operator: 'gt', type: 'event' }]),
  }
  const want = expected(await readAllEvents(app, filters))
  assert.ok(want.length > 0 && want.length < 30, `a proper subset: ${want.length}`)
  const res = await exportBytes(app, new URLSearchParams({ format: 'ndjson', ...filters }).toString())
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual(await readBackExport(t, res.rawPayload, 'ndjson'), want)

  const bad = await exportBytes(app, 'format=xlsx')
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().attr, 'format')
  const badDate = await exportBytes(app, 'format=csv&after=yesterday-ish')
  assert.equal(badDate.statusCode, 400)
  assert.equal(badDate.json().attr, 'after')
})

testOnEachEngine("a member of another project cannot export this project's events", async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const stranger = await strangerWithProject(app)
  const res = await exportBytes(app, 'format=csv', stranger.headers)
  assert.ok(res.statusCode === 403 || res.statusCode === 404, `${res.statusCode}`)
  const own = await app.http.inject({ method: 'GET', url: `/api/projects/${stranger.projectId}/events/export?format=csv`, headers: stranger.headers })
  assert.equal(own.statusCode, 200, own.body)
  assert.equal(own.body, 'uuid,event,distinct_id,timestamp,person_id,properties,elements_chain\n')
})

const MANY = 60_000

testOnEachEngine('a client that goes away stops the export: the engine reads no further and its query ends', async (t, engine) => {
  let store: EventStore | undefined
  const app = await buildTestApp(t, { engine, wrapEventStore: (s) => (store = s) })
  const start = Date.UTC(2024, 0, 1)
  for (let from = 0; from < MANY; from += 10_000) {
    const batch: StoredEvent[] = Array.from({ length: 10_000 }, (_, k) => ({
      uuid: crypto.randomUUID(),
      projectId: app.projectId,
      event: 'e',
      distinctId: `d${from + k}`,
      properties: JSON.stringify({ i: from + k, pad: 'x'.repeat(200) }),
      elementsChain: '',
      timestamp: new Date(start + (from + k) * 1000),
      createdAt: new Date(start),
      personId: null,
    }))
    await store!.insertBatch(batch)
  }
  await app.http.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.http.server.address() as AddressInfo
  await new Promise<void>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: `/api/projects/${app.projectId}/events/export?format=ndjson`, headers: app.auth }, (res) => {
      assert.equal(res.statusCode, 200)
      res.once('data', () => {
        req.destroy() // the client leaves after its first piece
        resolve()
      })
    })
    req.on('error', (err) => (req.destroyed ? resolve() : reject(err)))
  })
  const stats = await eventually(async () => {
    const s = app.services.eventExports.stats()
    return s.running === 0 ? s : null
  })
  assert.equal(stats.cancelled, 1)
  // Backpressure held the reads to what the socket took: far from the whole table.
  assert.ok(stats.rows < MANY, `rows read ${stats.rows} of ${MANY}`)
  if (engine === 'clickhouse') {
    await eventually(async () => (await clickHouseStatement(`SELECT count() FROM system.processes WHERE query_id LIKE 'tally-export-%'`)).trim() === '0')
  }
})
