import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test, type TestContext } from 'node:test'
import type { AddressInfo } from 'node:net'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import { createClickHouseQueryEngine } from '../../src/storage/clickhouse/clickhouse-query-engine.ts'
import { openClickHouse } from '../../src/storage/clickhouse/open-clickhouse.ts'
import { AppError } from '../../src/shared/errors.ts'
import { privateClickHouse, skipWithoutClickHouse, type PrivateClickHouse } from '../helpers/clickhouse.ts'
import { eventually } from '../helpers/eventually.ts'
import { captureEvents, postQuery } from '../helpers/query-data.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'

// The query guards on ClickHouse, each on a server of the test's own (a statement that is not stopped
// keeps a core busy; destroying the server ends it). Nothing here measures time: a stopped statement
// is one that leaves system.processes, well before it would have finished (minutes, see below).
const skip = skipWithoutClickHouse()

// A RE2 program that is costly per row (nested counted repetition) over 1 KB of hex per event: 28 ms a
// row on this machine, so 3,000 events are ~1.5 minutes of work. On 18.16 ClickHouse moved the filter
// to PREWHERE and evaluated it over whole granules: neither max_execution_time nor KILL QUERY stopped
// it (314 s past a 2 s limit, measured).
const HEAVY = '(?:.{0,30}[ABC]){10}.{0,30}ZZ'
const EVENTS = 3000
const blob = (i: number) => Array.from({ length: 8 }, (_, k) => createHash('sha512').update(`${i}/${k}`).digest('hex').toUpperCase()).join('')
const heavyTrends = {
  kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'e' }], dateRange: { date_from: '2024-01-01', date_to: '2024-01-03' },
  properties: [{ key: 'blob', operator: 'regex', value: HEAVY }],
}

async function appWithBlobs(t: TestContext, env: Record<string, string>): Promise<{ app: TestApp; server: PrivateClickHouse }> {
  const server = await privateClickHouse()
  t.after(() => server.destroy())
  const app = await buildTestApp(t, { env: { TALLY_CLICKHOUSE_URL: `${server.url}/guards`, ...env } })
  await captureEvents(app, Array.from({ length: EVENTS }, (_, i) => ({
    event: 'e', distinct_id: `p${i % 50}`, timestamp: new Date(Date.parse('2024-01-01T00:00:00Z') + i * 1000).toISOString(), properties: { blob: blob(i) },
  })))
  return { app, server }
}

/** Statements of ours running on the server that evaluate the heavy regex (wrapped by the dialect in `(?-s:`). */
async function heavyRunning(server: PrivateClickHouse): Promise<number> {
  const { host } = new URL(server.url)
  const res = await fetch(`http://${host}/`, { method: 'POST', body: "SELECT count() FROM system.processes WHERE position(query, '{10}.{0,30}ZZ') > 0 AND position(query, 'system.processes') = 0" })
  return Number((await res.text()).trim())
}

test('a regex-heavy query past the time limit is a 504 and stops in ClickHouse too', { skip, timeout: 300_000 }, async (t) => {
  const { app, server } = await appWithBlobs(t, { TALLY_QUERY_TIMEOUT_MS: '5000' })
  const res = await postQuery(app, heavyTrends)
  assert.equal(res.statusCode, 504, res.body)
  assert.equal(res.json().code, 'query_timeout')
  await eventually(async () => (await heavyRunning(server)) === 0, 150, 200)
})

test('a regex-heavy query is stopped in ClickHouse when its client goes away', { skip, timeout: 300_000 }, async (t) => {
  const { app, server } = await appWithBlobs(t, { TALLY_QUERY_TIMEOUT_MS: '600000' })
  await app.http.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.http.server.address() as AddressInfo
  const client = new AbortController()
  const request = fetch(`http://127.0.0.1:${port}/api/projects/${app.projectId}/query/`, {
    method: 'POST', headers: { ...app.auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: heavyTrends }), signal: client.signal,
  }).catch((err: unknown) => err)
  await eventually(async () => (await heavyRunning(server)) === 1, 150, 100)
  client.abort()
  assert.ok((await request) instanceof Error, 'the client gave up')
  await eventually(async () => (await heavyRunning(server)) === 0, 150, 200)
  // The slot is free again: the next query runs.
  assert.equal((await postQuery(app, { kind: 'EventsQuery', select: ['count()'] })).statusCode, 200)
})

test('statements run read-only and on at most TALLY_QUERY_THREADS cores', { skip }, async (t) => {
  const server = await privateClickHouse()
  t.after(() => server.destroy())
  const ch = await openClickHouse(`${server.url}/settings`, MIGRATIONS.clickhouse)
  t.after(() => ch.close())
  const engine = createClickHouseQueryEngine(ch, { concurrency: 1, threads: 1 })
  const guards = { timeoutMs: 10_000, maxRows: 100 }
  const settings = await engine.runSql("SELECT name, value FROM system.settings WHERE name IN ('max_threads', 'readonly') ORDER BY name", [], guards)
  assert.deepEqual(settings.rows.map((r) => [r.name, String(r.value)]), [['max_threads', '1'], ['readonly', '2']])
  await assert.rejects(engine.runSql("INSERT INTO events (uuid, event) VALUES (generateUUIDv4(), 'x')", [], guards), (err) => {
    assert.ok(err instanceof AppError && err.code === 'validation_error', String(err))
    assert.match(err.message, /Code: 164, Cannot insert into table in readonly mode/)
    return true
  })
})
