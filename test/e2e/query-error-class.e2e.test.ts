import assert from 'node:assert/strict'
import { test } from 'node:test'
import { captureEvents, postQuery } from '../helpers/query-data.ts'
import { buildTestApp } from '../helpers/test-app.ts'

// Queries that fail by their own making are 4xx naming what to change, never a 500 or a 503 "store
// unavailable" (which tells a load balancer and the SDKs that Tally is down).

function assert400(res: { statusCode: number; body: string }, label: string, detail?: RegExp): void {
  assert.equal(res.statusCode, 400, `${label}: ${res.body.slice(0, 400)}`)
  const body = JSON.parse(res.body)
  assert.equal(body.type, 'validation_error', label)
  if (detail) assert.match(body.detail, detail, label)
}

test('HogQL arithmetic overflow and concat() of 2,000+ arguments are 400s', async (t) => {
  const app = await buildTestApp(t)
  const hogql = (query: string) => postQuery(app, { kind: 'HogQLQuery', query })
  assert400(await hogql('select 9223372036854775807 + 1'), 'overflow', /overflow|out of range/i)
  assert400(await hogql('select -9223372036854775807 - 2'), 'negative overflow', /overflow|out of range/i)
  assert400(await hogql('select 9223372036854775807 * 2'), 'product overflow', /overflow|out of range/i)
  for (const n of [2_000, 5_000]) {
    assert400(await hogql(`select concat(${Array.from({ length: n }, (_, i) => `'${i}'`).join(', ')})`), `concat of ${n}`)
  }
  // Below the bound, concat still answers.
  const ok = await hogql(`select concat(${Array.from({ length: 100 }, () => `'a'`).join(', ')})`)
  assert.equal(ok.statusCode, 200, ok.body)
  assert.equal(ok.json().results[0][0], 'a'.repeat(100))
})

test("a query over DuckDB's memory limit is a 400 naming the limit; over the row limit likewise; the store stays up", async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_DUCKDB_MEMORY_LIMIT: '20MB', TALLY_QUERY_MAX_ROWS: '50' } })
  const pad = 'x'.repeat(2000)
  await captureEvents(app, Array.from({ length: 300 }, (_, i) => ({ event: 'm', distinct_id: `u${i}`, timestamp: '2024-01-01T00:00:00Z', properties: { pad: `${i}${pad}` } })))
  // The distinct 4 KB strings of a 300 × 300 join: 360 MB of distinct values against a 20 MB limit.
  const heavy = await postQuery(app, { kind: 'HogQLQuery', query: 'select uniqExact(concat(a.properties.pad, b.properties.pad)) from events a join events b on 1 = 1' })
  assert400(heavy, 'memory', /TALLY_DUCKDB_MEMORY_LIMIT/)
  const rows = await postQuery(app, { kind: 'EventsQuery', select: ['uuid'], limit: 100 })
  assert400(rows, 'rows', /TALLY_QUERY_MAX_ROWS/)
  // The store serves the next query, and readiness never saw an outage.
  const count = await postQuery(app, { kind: 'EventsQuery', select: ['count()'] })
  assert.equal(count.statusCode, 200, count.body)
  assert.equal(count.json().results[0][0], 300)
  assert.equal((await app.http.inject({ method: 'GET', url: '/_ready' })).statusCode, 200)
})
