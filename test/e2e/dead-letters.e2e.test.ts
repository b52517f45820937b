import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { test, type TestContext } from 'node:test'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { natsQueueEnv, TEST_NATS_URL } from '../helpers/nats-server.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { readAllEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { switchableStore } from '../helpers/ingestion-outage.ts'
import { tallyArgs } from '../helpers/tally-command.ts'

/** A store that refuses, as DuckDB refuses a value, every batch holding an event marked poison while `poisoned` is on. */
function poisonableStore() {
  const state = { poisoned: true }
  const store = switchableStore((batch) =>
    state.poisoned && batch.some((e) => e.properties.includes('"poison":true')) ? new Error('Conversion Error: Could not convert value') : null,
  )
  return { state, wrap: store.wrap }
}

const ROUND_TRIP = 'dead letters: a step that fails on purpose leaves every accepted event stored once or dead-lettered; replay stores them once'
testOnEachEngine(ROUND_TRIP, (t, engine) => deadLetterRoundTrip(t, engine, {}))
// The same on the JetStream queue: dead-lettering and replay go through the EventQueue port.
test(`${ROUND_TRIP} [duckdb, NATS queue]`, { skip: !TEST_NATS_URL && 'TEST_NATS_URL is not set' }, (t) => deadLetterRoundTrip(t, 'duckdb', natsQueueEnv(t) ?? {}))

async function deadLetterRoundTrip(t: TestContext, engine: Engine, queueEnv: Record<string, string>) {
  const { state, wrap } = poisonableStore()
  const app = await buildTestApp(t, { engine, wrapEventStore: wrap, env: { TALLY_INGEST_RETRY_MIN_MS: '10', ...queueEnv } })
  const api = privateApi(app)
  const uuids = Array.from({ length: 20 }, () => randomUUID())
  const batch = uuids.map((uuid, i) => ({ uuid, event: 'e', distinct_id: `u${i}`, properties: { n: i, ...(i % 7 === 3 ? { poison: true } : {}) } }))
  assert.equal((await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })).statusCode, 200)
  const poisoned = batch.filter((e) => e.properties.poison).map((e) => e.uuid).sort()

  type Letters = { count: number; results: Array<{ id: number; uuid: string; error: string; replayed_at: string | null }> }
  const letters = await eventually(async () => {
    const body = (await api.get('/dead_letters/')).json() as Letters
    return body.count === poisoned.length ? body : null
  })
  assert.deepEqual(letters.results.map((l) => l.uuid).sort(), poisoned)
  assert.equal(letters.results[0].replayed_at, null)
  assert.match(letters.results[0].error, /Conversion Error/)
  const stored = (await eventually(async () => {
    const events = await readAllEvents(app)
    return events.length === uuids.length - poisoned.length && events
  })).map((e) => e.id)
  assert.deepEqual(new Set(stored), new Set(uuids.filter((u) => !poisoned.includes(u))), 'the rest of the batch is stored, each once')

  state.poisoned = false
  // One by its id first (ClickHouse's ids are random up to 2^53), then every pending one.
  assert.deepEqual((await api.post('/dead_letters/replay/', { ids: [letters.results[0].id] })).json(), { replayed: 1 })
  const replay = await api.post('/dead_letters/replay/', {})
  assert.deepEqual(replay.json(), { replayed: poisoned.length - 1 })
  const all = await eventually(async () => {
    const events = await readAllEvents(app)
    return events.length === uuids.length && events
  })
  assert.deepEqual(all.map((e) => e.id).sort(), [...uuids].sort(), 'every event stored exactly once')
  assert.equal((await api.get('/dead_letters/?pending=true')).json().count, 0)
  assert.ok((await api.get('/dead_letters/')).json().results.every((l: { replayed_at: string | null }) => l.replayed_at !== null))
  assert.deepEqual((await api.post('/dead_letters/replay/', {})).json(), { replayed: 0 })
  assert.equal((await api.post('/dead_letters/replay/', { ids: ['x'] })).json().attr, 'ids__0')
}

testOnEachEngine('dead letters: tally dlq list and replay work on a stopped server\'s data dir', async (t, engine) => {
  const { wrap } = poisonableStore()
  const app = await buildTestApp(t, { engine, wrapEventStore: wrap })
  const uuid = randomUUID()
  const payload = { api_key: app.projectKey, event: 'e', distinct_id: 'u', uuid, properties: { poison: true } }
  assert.equal((await app.http.inject({ method: 'POST', url: '/e/', payload })).statusCode, 200)
  await eventually(async () => (await privateApi(app).get('/dead_letters/')).json().count === 1)
  await app.close()

  const cli = (...args: string[]) =>
    spawnSync(process.execPath, tallyArgs('dlq', ...args, '--data-dir', app.dataDir), { encoding: 'utf8', env: { ...process.env, TALLY_LOG_LEVEL: 'silent', ...(app.config.storage.clickhouseUrl ? { TALLY_CLICKHOUSE_URL: app.config.storage.clickhouseUrl } : {}) } })
  const list = cli('list', '--pending')
  assert.equal(list.status, 0, list.stderr)
  // The id is the store's own (DuckDB counts from 1; ClickHouse's are random, see its dead-letter store).
  const id = new RegExp(`^(\\d+)\\t.*\\tproject ${app.projectId}\\t${uuid}\\tstore_events: .*\\tpending$`, 'm').exec(list.stdout)?.[1]
  assert.ok(id, list.stdout)
  if (engine === 'duckdb') assert.equal(id, '1')
  const replay = cli('replay', '--id', id)
  assert.equal(replay.status, 0, replay.stderr)
  assert.match(replay.stdout, /^1 dead letter\(s\) put back on the queue/)
  assert.match(cli('list').stdout, /\treplayed \d{4}-/)
  assert.equal(cli('replay').stdout.trim().split(' ')[0], '0')
})

test('an event too large for DuckDB\'s memory limit is dead-lettered after a few tries; the events around it are stored', async (t) => {
  // Capture takes bodies up to 20 MB; under a 96MB limit one event of 12 MB cannot be inserted even alone.
  const app = await buildTestApp(t, {
    env: { TALLY_DUCKDB_MEMORY_LIMIT: '96MB', TALLY_DUCKDB_WRITE_MEMORY_LIMIT: '96MB', TALLY_INGEST_RETRY_MIN_MS: '10', TALLY_INGEST_RETRY_MAX_MS: '50' },
  })
  const api = privateApi(app)
  const huge = randomUUID()
  const others = [randomUUID(), randomUUID()]
  const batch = [
    { uuid: others[0], event: 'e', distinct_id: 'u' },
    { uuid: huge, event: 'e', distinct_id: 'u', properties: { $current_url: 'y'.repeat(12_000_000) } },
    { uuid: others[1], event: 'e', distinct_id: 'u' },
  ]
  assert.equal((await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })).statusCode, 200)
  type Letters = { count: number; results: Array<{ uuid: string; error: string }> }
  const letters = await eventually(async () => {
    const body = (await api.get('/dead_letters/')).json() as Letters
    return body.count > 0 ? body : null
  })
  assert.deepEqual(letters.results.map((l) => l.uuid), [huge])
  assert.match(letters.results[0]!.error, /event too large for DuckDB's memory limit/)
  const stored = await eventually(async () => {
    const events = await readAllEvents(app)
    return events.length === 2 && events
  })
  assert.deepEqual(stored.map((e) => e.id).sort(), [...others].sort())
})
