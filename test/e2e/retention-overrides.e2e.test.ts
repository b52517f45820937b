import assert from 'node:assert/strict'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { testOnEachEngine } from '../helpers/engines.ts'
import { queryOk } from '../helpers/query-data.ts'
import { clickHouseStatement } from '../helpers/clickhouse.ts'

const DAY = 86_400_000
const ev = (event: string, distinctId: string, daysAgo: number, properties: Record<string, unknown> = {}) => ({
  uuid: crypto.randomUUID(), event, distinct_id: distinctId, timestamp: new Date(Date.now() - daysAgo * DAY).toISOString(), properties,
})

async function capture(app: TestApp, batch: object[]) {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
}

/** Persons the `new` events count as (resolved through the overrides): their day's unique users. */
async function personsOfNewEvents(app: TestApp): Promise<number> {
  const body = await queryOk(app, { kind: 'TrendsQuery', interval: 'day', dateRange: { date_from: '-7d' }, series: [{ kind: 'EventsNode', event: 'new', math: 'dau' }] })
  return (body.results[0].data as number[]).reduce((a, b) => a + b, 0)
}

/** The old person ids the project's person_overrides still hold. */
async function overrideCount(app: TestApp, engine: string): Promise<number> {
  if (engine === 'clickhouse') {
    const db = new URL(app.config.storage.clickhouseUrl!).pathname.slice(1)
    return Number((await clickHouseStatement(`SELECT uniqExact(old_person_id) FROM \`${db}\`.person_overrides WHERE project_id = ${app.projectId}`)).trim())
  }
  await app.close() // DuckDB's file takes one process... and one instance
  const db = await DuckDBInstance.create(path.join(app.dataDir, 'events', 'events.duckdb'))
  try {
    const c = await db.connect()
    const rows = (await c.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM person_overrides WHERE project_id = ${app.projectId}`)).getRowObjects()
    c.closeSync()
    return Number(rows[0]!.n)
  } finally {
    db.closeSync()
  }
}

testOnEachEngine('retention also removes the person overrides whose old person has no event left, across a month boundary, and keeps the others', async (t, engine) => {
  const app = await buildTestApp(t, { engine, env: { TALLY_RETENTION_CHECK_MS: '200' } })
  // Two persons whose events are all past retention (in two different months), two with recent events.
  await capture(app, [
    ev('old', 'old-user', 70), ev('old', 'old-anon', 70), ev('old', 'old-anon', 35), ev('old', 'old-user', 35),
    ev('new', 'new-user', 2), ev('new', 'new-anon', 2),
  ])
  await waitForEvents(app, 6)
  // Each pair merges (the anonymous person into the other): one override each.
  await capture(app, [
    ev('$identify', 'old-user', 40, { $anon_distinct_id: 'old-anon' }),
    ev('$identify', 'new-user', 1, { $anon_distinct_id: 'new-anon' }),
  ])
  await waitForEvents(app, 8)
  assert.equal(await personsOfNewEvents(app), 1, 'the recent pair counts as one person through its override')

  assert.equal((await privateApi(app).patch('/', { event_retention_days: 30 })).statusCode, 200)
  const metrics = await eventually(async () => {
    const text = (await app.http.inject({ url: '/_metrics' })).body
    return /tally_retention_deleted_events_total 5\b/.test(text) && text
  }, 200)
  assert.match(metrics, /tally_retention_deleted_person_overrides_total 1\b/)
  // The kept override still resolves the recent pair's events to one person.
  assert.equal(await personsOfNewEvents(app), 1)
  assert.equal(await overrideCount(app, engine), 1)
})
