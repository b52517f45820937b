import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test, type TestContext } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { clickHouseStatement, freshClickHouseUrl } from '../helpers/clickhouse.ts'
import { captureEvents, queryOk, type TestEvent } from '../helpers/query-data.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { eventually } from '../helpers/eventually.ts'
import { testOnEachEngine } from '../helpers/engines.ts'

// The sessions aggregate (docs/web-analytics.md, "The sessions aggregate"): partials written with each
// stored batch, merged per session by queries, and rebuilt when events are deleted. Read through
// HogQL's `sessions` table and WebOverviewQuery, on both engines.
const pv = (session: string, distinct_id: string, timestamp: string, url: string, extra: Record<string, unknown> = {}): TestEvent => ({
  event: '$pageview', distinct_id, timestamp, properties: { $session_id: session, $current_url: url, ...extra },
})
const FIELDS = 'session_id, distinct_id, $session_duration, $entry_current_url, $entry_hostname, $end_current_url, $end_hostname, $pageview_count, $autocapture_count, $entry_utm_source, $entry_msclkid, $channel_type'
const sessions = async (app: TestApp, where = '') => (await queryOk(app, { kind: 'HogQLQuery', query: `SELECT ${FIELDS} FROM sessions ${where} ORDER BY session_id` })).results

testOnEachEngine('sessions aggregate: a session whose later events are stored first, its first ones in a second micro-batch', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  // Stored first: the end of the session (a click, then the last page view 40 s in).
  const later = [
    { event: '$autocapture', distinct_id: 'anon-1', timestamp: '2024-06-03T08:00:20Z', properties: { $session_id: 's-r', $current_url: 'https://b.example.com/pricing' } },
    pv('s-r', 'user-1', '2024-06-03T08:00:40Z', 'https://b.example.com/signup'),
  ]
  // Stored second: its first page view, with the campaign (Bing ads' click id).
  const earlier = [pv('s-r', 'anon-1', '2024-06-03T08:00:00Z', 'https://a.example.com/landing?x=1', { utm_source: 'bing', utm_medium: 'cpc', msclkid: 'm-1', $referring_domain: 'www.bing.com' })]
  await captureEvents(app, later)
  await captureEvents(app, earlier, later.length)

  assert.deepEqual(await sessions(app), [
    ['s-r', 'user-1', 40, 'https://a.example.com/landing?x=1', 'a.example.com', 'https://b.example.com/signup', 'b.example.com', 2, 1, 'bing', 'm-1', 'Paid Search'],
  ])
  const overview = await queryOk(app, { kind: 'WebOverviewQuery', dateRange: { date_from: '2024-06-03', date_to: '2024-06-03' }, properties: [] })
  const value = (key: string) => overview.results.find((r: { key: string }) => r.key === key).value
  assert.deepEqual([value('visitors'), value('views'), value('sessions'), value('session duration'), value('bounce rate')], [1, 2, 1, 40, 0])
})

testOnEachEngine('sessions aggregate: deleting a person with their events removes their sessions and rebuilds a shared one', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, [
    pv('s-a', 'gone', '2024-06-03T09:00:00Z', 'https://x.example.com/a', { utm_source: 'news' }),
    pv('s-a', 'gone', '2024-06-03T09:00:30Z', 'https://x.example.com/b'),
    // s-m: the kept person's page view, then the deleted person's later one (a shared device).
    pv('s-m', 'kept', '2024-06-03T10:00:00Z', 'https://x.example.com/m1'),
    pv('s-m', 'gone', '2024-06-03T10:05:00Z', 'https://x.example.com/m2', { msclkid: 'late' }),
    pv('s-k', 'kept', '2024-06-03T11:00:00Z', 'https://x.example.com/k'),
  ])
  const api = privateApi(app)
  const persons = (await api.get('/persons/?distinct_id=gone')).json().results
  assert.equal(persons.length, 1)
  const res = await api.delete(`/persons/${persons[0].uuid}/?delete_events=true`)
  assert.equal(res.statusCode, 202, res.body)
  const rows = await eventually(async () => {
    const r = await sessions(app)
    return r.length === 2 && r
  })
  assert.deepEqual(rows, [
    ['s-k', 'kept', 0, 'https://x.example.com/k', 'x.example.com', 'https://x.example.com/k', 'x.example.com', 1, 0, null, null, 'Unknown'],
    ['s-m', 'kept', 0, 'https://x.example.com/m1', 'x.example.com', 'https://x.example.com/m1', 'x.example.com', 1, 0, null, null, 'Unknown'],
  ])
})

const DAY = 86_400_000
const ago = (ms: number) => new Date(Date.now() - ms).toISOString()

testOnEachEngine('sessions aggregate: retention removes the sessions of deleted events and rebuilds one across the cut-off', async (t, engine) => {
  const app = await buildTestApp(t, { engine, env: { TALLY_RETENTION_CHECK_MS: '200' } })
  const at = (session: string, msAgo: number, url: string) => pv(session, 'u', ago(msAgo), url)
  const HOUR = 3_600_000
  await captureEvents(app, [
    at('s-old', 40 * DAY, 'https://r.example.com/old'),
    // Across the 30-day cut-off: its first page view goes, the later one stays.
    at('s-across', 30 * DAY + 2 * HOUR, 'https://r.example.com/first'),
    at('s-across', 30 * DAY - 2 * HOUR, 'https://r.example.com/second'),
    at('s-new', 2 * DAY, 'https://r.example.com/new'),
  ])
  assert.equal((await sessions(app)).length, 3)
  assert.equal((await privateApi(app).patch('/', { event_retention_days: 30 })).statusCode, 200)
  const rows = await eventually(async () => {
    const r = await sessions(app)
    return r.length === 2 && r[0][3] === 'https://r.example.com/second' && r
  }, 200)
  assert.deepEqual(rows.map((r: unknown[]) => [r[0], r[3], r[5], r[7]]), [
    ['s-across', 'https://r.example.com/second', 'https://r.example.com/second', 1],
    ['s-new', 'https://r.example.com/new', 'https://r.example.com/new', 1],
  ])
})

/** Closes `app` (built with `hooks` as its test context's `after`). */
async function closeApp(hooks: Array<() => Promise<void>>): Promise<void> {
  for (const h of hooks.splice(0)) await h()
}

/**
 * Takes the store back to before the sessions migration: its table (and DuckDB's macro, ClickHouse's
 * view) gone and the migration not recorded, the events kept.
 */
async function undoSessionsMigration(engine: string, dataDir: string, clickhouseUrl: string): Promise<void> {
  if (engine === 'clickhouse') {
    const db = `\`${new URL(clickhouseUrl).pathname.slice(1)}\``
    await clickHouseStatement(`DROP TABLE ${db}.sessions_mv`)
    await clickHouseStatement(`DROP TABLE ${db}.sessions`)
    await clickHouseStatement(`ALTER TABLE ${db}._migrations DELETE WHERE name = '0012-sessions.sql'`)
    await eventually(async () => (await clickHouseStatement(`SELECT count() FROM ${db}._migrations WHERE name = '0012-sessions.sql'`)).trim() === '0')
    return
  }
  const db = await DuckDBInstance.create(path.join(dataDir, 'events', 'events.duckdb'))
  const c = await db.connect()
  await c.run('DROP TABLE sessions')
  await c.run('DROP MACRO TABLE session_partials')
  await c.run(`DELETE FROM _migrations WHERE name = '0011-sessions.sql'`)
  c.closeSync()
  db.closeSync()
}

testOnEachEngine('sessions aggregate: the migration fills it from the events stored before it', async (t, engine) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-sessions-backfill-'))
  t.after(() => rm(dataDir, { recursive: true, force: true }))
  const clickhouseUrl = engine === 'clickhouse' ? await freshClickHouseUrl() : ''
  const env: Record<string, string> = engine === 'clickhouse' ? { TALLY_CLICKHOUSE_URL: clickhouseUrl } : {}
  const hooks: Array<() => Promise<void>> = []
  const before = await buildTestApp({ after: (fn: () => Promise<void>) => hooks.push(fn) } as unknown as TestContext, { dataDir, env })
  await captureEvents(before, [
    pv('s-1', 'u1', '2024-06-04T10:00:00Z', 'https://m.example.com/one', { utm_source: 'newsletter', utm_medium: 'email' }),
    pv('s-1', 'u1', '2024-06-04T10:00:15Z', 'https://m.example.com/two'),
    pv('s-2', 'u2', '2024-06-04T12:00:00Z', 'https://m.example.com/three'),
  ])
  await closeApp(hooks)
  await undoSessionsMigration(engine, dataDir, clickhouseUrl)

  // Opened again: the migration runs, and its backfill makes the sessions of the events already there.
  const keys = { TALLY_PROJECT_API_KEY: before.projectKey, TALLY_PERSONAL_API_KEY: before.personalKey }
  const after = await buildTestApp(t, { dataDir, env: { ...env, ...keys } })
  assert.deepEqual(await sessions(after), [
    ['s-1', 'u1', 15, 'https://m.example.com/one', 'm.example.com', 'https://m.example.com/two', 'm.example.com', 2, 0, 'newsletter', null, 'Email'],
    ['s-2', 'u2', 0, 'https://m.example.com/three', 'm.example.com', 'https://m.example.com/three', 'm.example.com', 1, 0, null, null, 'Unknown'],
  ])
})

/** A metric's value in `/_metrics` (undefined when absent). */
async function metric(app: TestApp, name: string): Promise<number | undefined> {
  const text = (await app.http.inject({ method: 'GET', url: '/_metrics' })).body
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)
  return m ? Number(m[1]) : undefined
}

test('sessions aggregate: the compaction leaves one partial per session and the same answers, before and after a later batch [duckdb]', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-sessions-compact-'))
  t.after(() => rm(dataDir, { recursive: true, force: true }))
  const hooks: Array<() => Promise<void>> = []
  const before = await buildTestApp({ after: (fn: () => Promise<void>) => hooks.push(fn) } as unknown as TestContext, { dataDir, env: { TALLY_SESSIONS_COMPACT_CHECK_MS: '0' } })
  // Three sessions over four micro-batches (each capture waits until its events are stored).
  const batches: TestEvent[][] = [
    [pv('s-1', 'anon', '2024-06-05T10:00:30Z', 'https://w.example.com/two'), pv('s-2', 'v', '2024-06-05T11:00:00Z', 'https://w.example.com/solo')],
    [pv('s-1', 'anon', '2024-06-05T10:00:00Z', 'https://w.example.com/one', { utm_source: 'google', utm_medium: 'cpc', $referring_domain: 'www.google.com' })],
    [{ event: '$autocapture', distinct_id: 'user-1', timestamp: '2024-06-05T10:01:00Z', properties: { $session_id: 's-1', $current_url: 'https://w.example.com/three' } },
      pv('s-3', 'x', '2024-06-05T23:59:55Z', 'https://w.example.com/late')],
    [pv('s-3', 'x', '2024-06-06T00:00:20Z', 'https://w.example.com/after-midnight', { msclkid: 'not-entry' })],
  ]
  let stored = 0
  for (const b of batches) {
    await captureEvents(before, b, stored)
    stored += b.length
  }
  const overview = async (app: TestApp) => {
    const r = await queryOk(app, { kind: 'WebOverviewQuery', dateRange: { date_from: '2024-06-05', date_to: '2024-06-05' }, properties: [] })
    return r.results.map((x: { key: string; value: unknown }) => [x.key, x.value])
  }
  const expected = [
    ['s-1', 'user-1', 60, 'https://w.example.com/one', 'w.example.com', 'https://w.example.com/three', 'w.example.com', 2, 1, 'google', null, 'Paid Search'],
    ['s-2', 'v', 0, 'https://w.example.com/solo', 'w.example.com', 'https://w.example.com/solo', 'w.example.com', 1, 0, null, null, 'Unknown'],
    ['s-3', 'x', 25, 'https://w.example.com/late', 'w.example.com', 'https://w.example.com/after-midnight', 'w.example.com', 2, 0, null, null, 'Unknown'],
  ]
  assert.deepEqual(await sessions(before), expected)
  const overviewBefore = await overview(before)
  assert.equal(await metric(before, 'tally_session_partials'), undefined, 'no compaction while it is off')
  await closeApp(hooks)

  // Opened again with the compaction on: the six partials (more if a capture took two batches) become three rows.
  const keys = { TALLY_PROJECT_API_KEY: before.projectKey, TALLY_PERSONAL_API_KEY: before.personalKey }
  const after = await buildTestApp(t, { dataDir, env: { TALLY_SESSIONS_COMPACT_CHECK_MS: '100', ...keys } })
  await eventually(async () => (await metric(after, 'tally_session_partials')) === 3)
  assert.ok((await metric(after, 'tally_session_compaction_removed_partials_total'))! >= 3)
  assert.deepEqual(await sessions(after), expected)
  assert.deepEqual(await overview(after), overviewBefore)

  // A later batch of a compacted session: a new partial beside its merged row, merged by queries, then compacted.
  const removed = (await metric(after, 'tally_session_compaction_removed_partials_total'))!
  await captureEvents(after, [pv('s-1', 'user-1', '2024-06-05T10:02:00Z', 'https://w.example.com/four'), pv('s-2', 'v', '2024-06-05T10:59:58Z', 'https://w.example.com/earlier')], stored)
  const later = [
    ['s-1', 'user-1', 120, 'https://w.example.com/one', 'w.example.com', 'https://w.example.com/four', 'w.example.com', 3, 1, 'google', null, 'Paid Search'],
    ['s-2', 'v', 2, 'https://w.example.com/earlier', 'w.example.com', 'https://w.example.com/solo', 'w.example.com', 2, 0, null, null, 'Unknown'],
    expected[2],
  ]
  assert.deepEqual(await sessions(after), later)
  await eventually(async () => (await metric(after, 'tally_session_compaction_removed_partials_total')) === removed + 2 && (await metric(after, 'tally_session_partials')) === 3)
  assert.deepEqual(await sessions(after), later)
})

testOnEachEngine('sessions aggregate: HogQL bounds on $start_timestamp read whole sessions across them', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  // Each session's events in two micro-batches: a partial either side of a bound of the query.
  const first = [
    pv('s-before', 'a', '2024-06-04T23:50:00Z', 'https://t.example.com/before-1'),
    pv('s-in', 'b', '2024-06-05T23:50:00Z', 'https://t.example.com/in-1'),
    pv('s-after', 'c', '2024-06-06T00:05:00Z', 'https://t.example.com/after'),
  ]
  const second = [
    pv('s-before', 'a', '2024-06-05T00:10:00Z', 'https://t.example.com/before-2'),
    pv('s-in', 'b', '2024-06-06T00:20:00Z', 'https://t.example.com/in-2'),
  ]
  await captureEvents(app, first)
  await captureEvents(app, second, first.length)
  const rows = async (where: string) =>
    (await queryOk(app, { kind: 'HogQLQuery', query: `SELECT session_id, $session_duration, $entry_current_url, $end_current_url, $pageview_count FROM sessions WHERE ${where} ORDER BY session_id` })).results
  // s-before started before the day (its later partial is in it), s-in ends after it: whole, as without bounds.
  const inDay = [['s-in', 1800, 'https://t.example.com/in-1', 'https://t.example.com/in-2', 2]]
  assert.deepEqual(await rows(`$start_timestamp >= '2024-06-05' AND $start_timestamp < '2024-06-06'`), inDay)
  assert.deepEqual(await rows(`toDateTime('2024-06-06 00:00:00') > $start_timestamp AND $start_timestamp >= toDateTime('2024-06-05 00:00:00')`), inDay)
  assert.deepEqual(await rows(`$start_timestamp >= '2024-06-05'`), [...inDay, ['s-after', 0, 'https://t.example.com/after', 'https://t.example.com/after', 1]].sort((x, y) => String(x[0]).localeCompare(String(y[0]))))
  assert.deepEqual(await rows(`$start_timestamp < '2024-06-05 00:00:00'`), [['s-before', 1200, 'https://t.example.com/before-1', 'https://t.example.com/before-2', 2]])
})
