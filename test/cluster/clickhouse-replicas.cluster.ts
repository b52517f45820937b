import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clickHouseSkipReason, type PrivateClickHouse } from '../helpers/clickhouse.ts'
import { clickHouseReplicas, hasZooKeeper, privateZooKeeper } from '../helpers/zookeeper.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { postQuery } from '../helpers/query-data.ts'
import { eventually } from '../helpers/eventually.ts'
import { openClickHouse } from '../../src/storage/clickhouse/open-clickhouse.ts'
import { eventRowsText } from '../../src/storage/clickhouse/clickhouse-event-rows.ts'
import type { StoredEvent } from '../../src/ingestion/event-store.ts'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import { createClickHouseEventRetention } from '../../src/storage/clickhouse/clickhouse-event-retention.ts'

const skip = !hasZooKeeper ? 'zookeeper is not installed (apt-get install zookeeper)' : (clickHouseSkipReason() ?? false)
const DATABASE = 'tally_replicated'

/** A statement on one replica; its TabSeparated answer. */
async function on(replica: PrivateClickHouse, sql: string): Promise<string> {
  const res = await fetch(`http://${new URL(replica.url).host}/`, { method: 'POST', body: sql })
  const text = await res.text()
  if (!res.ok) throw new Error(`ClickHouse: ${text}`)
  return text.trim()
}

/** Polls until `actual()` gives `expected` (the last value in the failure); no time is asserted. */
async function until<T>(actual: () => Promise<T>, expected: T, tries = 600): Promise<void> {
  let last: unknown
  await eventually(async () => (last = await actual().catch((err: unknown) => String(err))) === expected, tries, 100).catch(() => {
    assert.equal(last, expected)
  })
}

async function capture(app: TestApp, distinctId: string, n: number): Promise<void> {
  const batch = Array.from({ length: n }, (_, i) => ({ uuid: crypto.randomUUID(), event: 'signup', distinct_id: distinctId, timestamp: new Date(Date.now() - i * 1000).toISOString(), properties: { i } }))
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
}

const trends = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'signup', math: 'total' }], dateRange: { date_from: '-1d' }, interval: 'day' }
/** The total of the trends query answered through Tally's query API. */
async function trendsTotal(app: TestApp): Promise<number> {
  const res = await postQuery(app, trends, { refresh: 'force_blocking' })
  assert.equal(res.statusCode, 200, res.body)
  return (res.json().results as Array<{ count: number }>)[0]!.count
}

test('TALLY_CLICKHOUSE_CLUSTER: two processes migrate 2 replicas at once (Replicated tables ON CLUSTER); events, a GDPR delete and queries reach both; with one replica killed, capture and queries go to the other', { skip, timeout: 300_000 }, async (t) => {
  const zk = await privateZooKeeper()
  t.after(() => zk.destroy())
  const [r1, r2] = await clickHouseReplicas(2, zk.port)
  t.after(() => Promise.all([r1!.destroy(), r2!.destroy()]))
  const env = { TALLY_CLICKHOUSE_URL: `${r1!.url}/${DATABASE},${r2!.url}/${DATABASE}`, TALLY_CLICKHOUSE_CLUSTER: 'tally', TALLY_LOG_LEVEL: process.env.DEBUG_LOG ?? 'silent' }
  // Two processes starting together (a worker and an api, say) migrate the same cluster.
  const [app] = await Promise.all([buildTestApp(t, { env }), buildTestApp(t, { env })])

  for (const replica of [r1!, r2!]) {
    const engines = await on(replica, `SELECT name, engine FROM system.tables WHERE database = '${DATABASE}' ORDER BY name FORMAT TabSeparated`)
    assert.deepEqual(engines.split('\n'), [
      '_migrations\tReplicatedMergeTree',
      'events\tReplicatedReplacingMergeTree',
      'events_dead_letter\tReplicatedMergeTree',
      'events_dead_letter_replay\tReplicatedMergeTree',
      'person_overrides\tReplicatedReplacingMergeTree',
      'sessions\tReplicatedMergeTree',
      'sessions_mv\tMaterializedView',
    ], `tables of ${replica.url}`)
    assert.match(await on(replica, `SELECT count() FROM system.columns WHERE database = '${DATABASE}' AND table = 'events' AND name = 'mat_session_id'`), /^1$/)
  }

  await capture(app!, 'keep', 30)
  await capture(app!, 'gone', 20)
  await until(() => trendsTotal(app!), 50)
  for (const replica of [r1!, r2!]) await until(() => on(replica, `SELECT count() FROM ${DATABASE}.events`), '50')

  // GDPR: the person's events go from every replica.
  const persons = await app!.http.inject({ method: 'GET', url: `/api/projects/${app!.projectId}/persons/?distinct_id=gone`, headers: app!.auth })
  const gone = (persons.json() as { results: Array<{ uuid: string }> }).results[0]!
  const del = await app!.http.inject({ method: 'DELETE', url: `/api/projects/${app!.projectId}/persons/${gone.uuid}/?delete_events=true`, headers: app!.auth })
  assert.equal(del.statusCode, 202, del.body)
  for (const replica of [r1!, r2!]) assert.equal(await on(replica, `SELECT count() FROM ${DATABASE}.events WHERE distinct_id = 'gone'`), '0', `GDPR delete on ${replica.url}`)

  // An insert whose answer was lost is sent again whole, perhaps to the other replica: the same rows are the
  // same block, which the replicated table drops by its hash (on top of the event store's uuid lookup).
  const row = (distinctId: string, i: number, timestamp: Date): StoredEvent =>
    ({ uuid: crypto.randomUUID(), projectId: app!.projectId, event: 'signup', distinctId, properties: JSON.stringify({ i, $session_id: 's' }), elementsChain: '', timestamp, createdAt: new Date(), personId: null }) as StoredEvent
  const rows = Array.from({ length: 5 }, (_, i) => row('retried', i, new Date()))
  for (const replica of [r1!, r2!]) {
    const ch = await openClickHouse(`${replica.url}/${DATABASE}`, MIGRATIONS.clickhouse, { cluster: 'tally' })
    await ch.insertJsonLines('events', eventRowsText(rows))
    await ch.close()
  }
  // r2 stored its insert itself (or dropped it): 10 would be a second copy. The totals below catch one arriving late.
  assert.equal(await on(r2!, `SELECT count() FROM ${DATABASE}.events WHERE distinct_id = 'retried'`), '5')
  await until(() => on(r1!, `SELECT count() FROM ${DATABASE}.events WHERE distinct_id = 'retried'`), '5')
  await until(() => trendsTotal(app!), 35)

  // Retention drops a whole old month (DROP PARTITION) and deletes the rest (a mutation): gone from both replicas.
  const both = await openClickHouse(`${r2!.url}/${DATABASE},${r1!.url}/${DATABASE}`, MIGRATIONS.clickhouse, { cluster: 'tally' })
  t.after(() => both.close())
  await both.insertJsonLines('events', eventRowsText([...[1, 2, 3].map((i) => row('old', i, new Date('2024-01-15T10:00:00Z'))), row('old', 4, new Date('2024-02-20T10:00:00Z'))]))
  const oldOn = (replica: PrivateClickHouse) => on(replica, `SELECT count() FROM ${DATABASE}.events WHERE distinct_id = 'old'`)
  for (const replica of [r1!, r2!]) await until(() => oldOn(replica), '4')
  const step = await createClickHouseEventRetention(both).deleteBefore(app!.projectId, new Date('2024-02-25T00:00:00Z'), 10_000)
  assert.equal(step.events, 4)
  for (const replica of [r1!, r2!]) await until(() => oldOn(replica), '0')

  // The first replica dies: capture and queries go on through the second.
  await r1!.kill9()
  await capture(app!, 'keep', 25)
  await until(() => trendsTotal(app!), 60)
  assert.equal(await on(r2!, `SELECT count() FROM ${DATABASE}.events`), '60')

  // Back, it fetches what it missed from the other replica.
  await r1!.start()
  await until(() => on(r1!, `SELECT count() FROM ${DATABASE}.events`), '60')
  assert.equal(await on(r1!, `SELECT count() FROM ${DATABASE}.events WHERE distinct_id = 'gone'`), '0')
})

test('TALLY_CLICKHOUSE_URL as a list of replicas and TALLY_CLICKHOUSE_CLUSTER are checked at start', async () => {
  const { loadConfig } = await import('../../src/config/load-config.ts')
  const replicas = 'http://default:@ch1:8123/tally, http://default:@ch2:8123/tally'
  const c = loadConfig({}, { TALLY_CLICKHOUSE_URL: replicas, TALLY_CLICKHOUSE_CLUSTER: 'tally' })
  assert.equal(c.storage.clickhouseCluster, 'tally')
  assert.equal(loadConfig({}, { TALLY_CLICKHOUSE_URL: replicas }).storage.clickhouseCluster, null)
  assert.throws(() => loadConfig({}, { TALLY_CLICKHOUSE_URL: 'http://ch1:8123/tally,http://ch2:8123/other' }), /TALLY_CLICKHOUSE_URL .*same database/)
  assert.throws(() => loadConfig({}, { TALLY_CLICKHOUSE_URL: 'http://ch1:8123/tally,nats://ch2:4222' }), /TALLY_CLICKHOUSE_URL/)
  assert.throws(() => loadConfig({}, { TALLY_CLICKHOUSE_CLUSTER: 'tally' }), /TALLY_CLICKHOUSE_CLUSTER needs TALLY_CLICKHOUSE_URL/)
  assert.throws(() => loadConfig({}, { TALLY_CLICKHOUSE_URL: replicas, TALLY_CLICKHOUSE_CLUSTER: "x' ON" }), /TALLY_CLICKHOUSE_CLUSTER must be a cluster name/)
})
