import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
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

testOnEachEngine('HogQL arithmetic overflow is a 400 where the engine raises it (ClickHouse wraps, as PostHog answers); concat() of 2,000+ arguments is a 400', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const hogql = (query: string) => postQuery(app, { kind: 'HogQLQuery', query })
  const overflow = async (query: string, label: string, wrapped: number) => {
    if (engine === 'duckdb') return assert400(await hogql(query), label, /overflow|out of range/i)
    const res = await hogql(query)
    assert.equal(res.statusCode, 200, `${label}: ${res.body.slice(0, 300)}`)
    assert.equal(res.json().results[0][0], wrapped, label)
  }
  await overflow('select 9223372036854775807 + 1', 'overflow', -9223372036854775808)
  await overflow('select -9223372036854775807 - 2', 'negative overflow', 9223372036854775807)
  await overflow('select 9223372036854775807 * 2', 'product overflow', -2)
  for (const n of [2_000, 5_000]) {
    assert400(await hogql(`select concat(${Array.from({ length: n }, (_, i) => `'${i}'`).join(', ')})`), `concat of ${n}`)
  }
  // Below the bound, concat still answers.
  const ok = await hogql(`select concat(${Array.from({ length: 100 }, () => `'a'`).join(', ')})`)
  assert.equal(ok.statusCode, 200, ok.body)
  assert.equal(ok.json().results[0][0], 'a'.repeat(100))
})

testOnEachEngine("a query over the engine's query memory limit is a 400 naming the limit; over the row limit likewise; the store stays up", async (t, engine) => {
  const memoryLimit = engine === 'duckdb' ? 'TALLY_DUCKDB_MEMORY_LIMIT' : 'TALLY_CLICKHOUSE_QUERY_MEMORY_LIMIT'
  const app = await buildTestApp(t, { engine, env: { [memoryLimit]: '20MB', TALLY_QUERY_MAX_ROWS: '50' } })
  const pad = 'x'.repeat(2000)
  await captureEvents(app, Array.from({ length: 300 }, (_, i) => ({ event: 'm', distinct_id: `u${i}`, timestamp: '2024-01-01T00:00:00Z', properties: { pad: `${i}${pad}` } })))
  // The distinct 4 KB strings of a 300 × 300 join: 360 MB of distinct values against a 20 MB limit.
  const heavy = await postQuery(app, { kind: 'HogQLQuery', query: 'select uniqExact(concat(a.properties.pad, b.properties.pad)) from events a join events b on 1 = 1' })
  assert400(heavy, 'memory', new RegExp(memoryLimit))
  const rows = await postQuery(app, { kind: 'EventsQuery', select: ['uuid'], limit: 100 })
  assert400(rows, 'rows', /TALLY_QUERY_MAX_ROWS/)
  // The store serves the next query, and readiness never saw an outage.
  const count = await postQuery(app, { kind: 'EventsQuery', select: ['count()'] })
  assert.equal(count.statusCode, 200, count.body)
  assert.equal(count.json().results[0][0], 300)
  assert.equal((await app.http.inject({ method: 'GET', url: '/_ready' })).statusCode, 200)
})
