import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test, type TestContext } from 'node:test'
import { run } from '../../src/cli/run.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { postQuery } from '../helpers/query-data.ts'
import { createTestDatabase, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'
import { freshClickHouseUrl, skipWithoutClickHouse } from '../helpers/clickhouse.ts'
import { aRecording, listRecordings, postRecording } from '../helpers/replay.ts'
import { privateApi } from '../helpers/private-api.ts'

const dateRange = { date_from: '2024-06-01', date_to: '2024-06-04' }
const QUERIES = {
  // Unique users over the whole range: an anonymous id merged into its user counts once only through its override.
  users: { kind: 'TrendsQuery', interval: 'month', dateRange, series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }] },
  dau: { kind: 'TrendsQuery', interval: 'day', dateRange, series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }] },
  chromeViews: { kind: 'TrendsQuery', interval: 'day', dateRange, series: [{ kind: 'EventsNode', event: '$pageview', properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] }] },
  proUsers: { kind: 'TrendsQuery', interval: 'day', dateRange, series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] },
  funnel: { kind: 'FunnelsQuery', dateRange, series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signed up' }, { kind: 'EventsNode', event: 'purchase' }], breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } },
  revenue: { kind: 'TrendsQuery', interval: 'day', dateRange, series: [{ kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'amount' }, { kind: 'EventsNode', event: 'signed up', math: 'dau' }] },
}

async function answers(app: TestApp): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  for (const [name, query] of Object.entries(QUERIES)) {
    const res = await postQuery(app, query)
    assert.equal(res.statusCode, 200, `${name}: ${res.body}`)
    out[name] = res.json().results
  }
  return out
}

/** The recordings of the project and the bytes of each block, as the replay API serves them. */
async function recordings(app: TestApp): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {}
  for (const r of (await listRecordings(app)).results) {
    const api = privateApi(app)
    const sources = (await api.get(`/session_recordings/${r.id}/snapshots/`)).json().sources as Array<{ blob_key: string }>
    out[r.id] = []
    for (const s of sources) {
      const block = await api.get(`/session_recordings/${r.id}/snapshots/?source=blob_v2&blob_key=${s.blob_key}`)
      assert.equal(block.statusCode, 200, `${r.id} block ${s.blob_key}: ${block.body}`)
      out[r.id]!.push(block.body)
    }
  }
  return out
}

async function tmp(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-move-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** Three days of 40 users: pageviews in two browsers, sign-ups, purchases, $set plans, anonymous ids merged by $identify. */
function someHistory() {
  const events: object[] = []
  for (let u = 0; u < 40; u++) {
    for (let d = 0; d < 3; d++) {
      const at = (h: number) => new Date(Date.UTC(2024, 5, 1 + d, 8 + h, u)).toISOString()
      const id = d === 0 && u % 4 === 0 ? `anon-${u}` : `user-${u}`
      events.push({ uuid: crypto.randomUUID(), event: '$pageview', distinct_id: id, timestamp: at(0), properties: { $browser: u % 3 ? 'Chrome' : 'Firefox', ...(d === 0 ? { $set: { plan: u % 2 ? 'pro' : 'free' } } : {}) } })
      if ((u + d) % 3 === 0) events.push({ uuid: crypto.randomUUID(), event: 'signed up', distinct_id: id, timestamp: at(1), properties: {} })
      if ((u + d) % 6 === 0) events.push({ uuid: crypto.randomUUID(), event: 'purchase', distinct_id: id, timestamp: at(2), properties: { amount: u } })
    }
  }
  return events
}

test('tally export / import move an embedded data dir onto PostgreSQL + ClickHouse and back, with identical insight answers and recordings', {
  skip: !TEST_POSTGRES_URL ? 'needs TEST_POSTGRES_URL' : skipWithoutClickHouse(),
  timeout: 300_000,
}, async (t) => {
  const first = await buildTestApp(t)
  const history = someHistory()
  for (let i = 0; i < history.length; i += 100) {
    const res = await first.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: first.projectKey, batch: history.slice(i, i + 100) } })
    assert.equal(res.statusCode, 200)
  }
  await waitForEvents(first, history.length)
  // Anonymous ids that already had events merge into their users: person overrides.
  const identify = Array.from({ length: 10 }, (_, k) => ({ event: '$identify', distinct_id: `user-${k * 4}`, timestamp: new Date(Date.UTC(2024, 5, 2, 7)).toISOString(), properties: { $anon_distinct_id: `anon-${k * 4}` } }))
  assert.equal((await first.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: first.projectKey, batch: identify } })).statusCode, 200)
  await waitForEvents(first, history.length + identify.length)
  const before = await answers(first)
  assert.ok((before.revenue as unknown[]).length === 2)
  // Recordings: their bytes are session files in the embedded data dir.
  await postRecording(first, 'moved-1', aRecording(Date.now() - 3_600_000), { distinctId: 'user-1' })
  await postRecording(first, 'moved-1', aRecording(Date.now() - 3_500_000), { distinctId: 'user-1' })
  await postRecording(first, 'moved-2', aRecording(Date.now() - 600_000, { clicks: 3 }), { distinctId: 'user-2' })
  const recorded = await recordings(first)
  assert.deepEqual(Object.keys(recorded).sort(), ['moved-1', 'moved-2'])
  assert.equal(recorded['moved-1']!.length, 2)
  await first.close()

  const keys = { TALLY_PROJECT_API_KEY: first.projectKey, TALLY_PERSONAL_API_KEY: first.personalKey, TALLY_LOG_LEVEL: 'silent' }
  const dump = await tmp(t)
  assert.equal(await run(['export', '--out', dump], { ...keys, TALLY_DATA_DIR: first.dataDir }), 0)

  const scaleEnv = { TALLY_DATABASE_URL: await createTestDatabase(t), TALLY_CLICKHOUSE_URL: await freshClickHouseUrl() }
  const scaleDir = await tmp(t)
  assert.equal(await run(['import', '--from', dump], { ...keys, ...scaleEnv, TALLY_DATA_DIR: scaleDir }), 0)
  const scale = await buildTestApp(t, { dataDir: scaleDir, env: { ...keys, ...scaleEnv } })
  assert.deepEqual(await answers(scale), before, 'the scale stack answers as the embedded one did')
  assert.deepEqual(await recordings(scale), recorded, 'the scale stack plays the recordings (their bytes now in PostgreSQL)')
  // A second import into the same stores is refused.
  await scale.close()
  assert.equal(await run(['import', '--from', dump], { ...keys, ...scaleEnv, TALLY_DATA_DIR: scaleDir }), 1)

  const back = await tmp(t)
  assert.equal(await run(['export', '--out', back], { ...keys, ...scaleEnv, TALLY_DATA_DIR: scaleDir }), 0)
  const embeddedDir = await tmp(t)
  assert.equal(await run(['import', '--from', back], { ...keys, TALLY_DATA_DIR: embeddedDir }), 0)
  const again = await buildTestApp(t, { dataDir: embeddedDir, env: keys })
  assert.deepEqual(await answers(again), before, 'back on the embedded stack, the same answers')
  assert.deepEqual(await recordings(again), recorded, 'and the same recordings')
})
