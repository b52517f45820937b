import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { eventually } from '../helpers/eventually.ts'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import { loadConfig } from '../../src/config/load-config.ts'
import { openDuckDb } from '../../src/storage/duckdb/open-duckdb.ts'
import { openPgliteSqlClient } from '../../src/storage/pglite/pglite-sql-client.ts'

/** The value of one sample of `/_metrics` (name plus its exact label text), or undefined. */
async function sample(app: TestApp, series: string): Promise<number | undefined> {
  const res = await app.http.inject({ method: 'GET', url: '/_metrics' })
  assert.equal(res.statusCode, 200)
  assert.match(res.headers['content-type'] as string, /^text\/plain; version=0\.0\.4/)
  const line = res.body.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

test('metrics: requests by route template and status, ingestion outcomes, /decide and process memory', async (t) => {
  const app = await buildTestApp(t)
  const event = { api_key: app.projectKey, event: 'e', distinct_id: 'u1' }
  assert.equal((await app.http.inject({ method: 'POST', url: '/e/', payload: event })).statusCode, 200)
  assert.equal((await app.http.inject({ method: 'POST', url: '/e/', payload: { ...event, distinct_id: '' } })).statusCode, 200)
  assert.equal((await app.http.inject({ method: 'POST', url: '/e/', payload: { ...event, api_key: 'phc_nope' } })).statusCode, 401)
  assert.equal((await app.http.inject({ method: 'POST', url: '/decide/?v=3', payload: { api_key: app.projectKey, distinct_id: 'u1' } })).statusCode, 200)
  await app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/feature_flags/`, headers: app.auth, payload: { key: 'f', filters: { groups: [{ rollout_percentage: 100 }] } } })
  assert.equal((await app.http.inject({ method: 'POST', url: '/decide/?v=3', payload: { api_key: app.projectKey, distinct_id: 'u1' } })).statusCode, 200)

  assert.equal(await sample(app, 'tally_http_requests_total{route="/e/",method="POST",status="200"}'), 2)
  assert.equal(await sample(app, 'tally_http_requests_total{route="/e/",method="POST",status="401"}'), 1)
  assert.equal(await sample(app, 'tally_http_request_duration_seconds_count{route="/decide/",method="POST"}'), 2)
  assert.equal(await sample(app, 'tally_ingestion_events_total{outcome="ok",reason="accepted"}'), 1)
  assert.equal(await sample(app, 'tally_ingestion_events_total{outcome="drop",reason="empty_distinct_id"}'), 1)
  await eventually(async () => (await sample(app, 'tally_ingestion_events_total{outcome="ok",reason="stored"}')) === 1)
  assert.equal(await sample(app, 'tally_queue_acked_total'), 1)
  assert.ok((await sample(app, 'tally_event_store_batch_seconds_count{outcome="ok"}'))! >= 1)
  assert.equal(await sample(app, 'tally_ingestion_blocked{component="queue"}'), 0)
  assert.equal(await sample(app, 'tally_ingestion_blocked{component="event_store"}'), 0)
  assert.equal(await sample(app, 'tally_decide_evaluations_total'), 2)
  assert.equal(await sample(app, 'tally_decide_errors_total'), 0)
  assert.ok((await sample(app, 'process_resident_memory_bytes'))! > 10_000_000)
  assert.ok((await sample(app, 'tally_person_cache_hit_ratio')) !== undefined)
})

test("metrics: the embedded stores' memory; PGlite's shared_buffers and DuckDB's memory_limit from the configuration", async (t) => {
  const app = await buildTestApp(t)
  assert.equal((await app.http.inject({ method: 'POST', url: '/e/', payload: { api_key: app.projectKey, event: 'e', distinct_id: 'u1' } })).statusCode, 200)
  await eventually(async () => (await sample(app, 'tally_ingestion_events_total{outcome="ok",reason="stored"}')) === 1)
  assert.ok((await sample(app, 'tally_store_memory_bytes{store="duckdb"}'))! > 0)
  // The WebAssembly memory PostgreSQL runs in: at least its 32MB default shared_buffers.
  assert.ok((await sample(app, 'tally_store_memory_bytes{store="pglite"}'))! > 32 * 1024 * 1024)

  const db = await openPgliteSqlClient('memory://', { sharedBuffers: loadConfig({}, { TALLY_PGLITE_SHARED_BUFFERS: '24MB' }).storage.pgliteSharedBuffers })
  t.after(() => db.close())
  assert.deepEqual(await db.query('SHOW shared_buffers'), [{ shared_buffers: '24MB' }])
  assert.equal(loadConfig({}, {}).storage.pgliteSharedBuffers, '32MB')
  assert.throws(() => loadConfig({}, { TALLY_PGLITE_SHARED_BUFFERS: '32 MB' }), /TALLY_PGLITE_SHARED_BUFFERS must be a size/)
  assert.throws(() => loadConfig({}, { TALLY_DUCKDB_MEMORY_LIMIT: '1TB' }), /TALLY_DUCKDB_MEMORY_LIMIT must be a size/)
  assert.equal(loadConfig({}, {}).storage.duckdbWriteMemoryLimit, '128MB')
  assert.throws(() => loadConfig({}, { TALLY_DUCKDB_WRITE_MEMORY_LIMIT: '0MB' }), /TALLY_DUCKDB_WRITE_MEMORY_LIMIT must be a size/)
  const duck = await openDuckDb(':memory:', MIGRATIONS.duckdb, { memoryLimit: loadConfig({}, {}).storage.duckdbMemoryLimit })
  t.after(() => duck.close())
  const limit = (await duck.connection.runAndReadAll("SELECT current_setting('memory_limit') AS m")).getRowObjects()[0]!.m
  assert.match(String(limit), /^48[0-9]\.\d+ MiB$/) // 512MB = 488.2 MiB
})
