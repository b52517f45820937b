import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { generateToken } from '../../src/shared/ids.ts'
import { freePort, privateClickHouse } from '../helpers/clickhouse.ts'
import { hasNatsServer, startOwnNatsServer } from '../helpers/nats-server.ts'
import { PG_BIN, startOwnPostgres } from '../helpers/own-postgres.ts'
import { hasDist, tallyProcess, type TallyProcess } from '../helpers/cluster-process.ts'
import { streamEvents, type LoadLedger } from '../helpers/cluster-load.ts'
import { eventually } from '../helpers/eventually.ts'

// The issue asks for 200,000 events; on CI's 2-core machine (shared with ClickHouse, PostgreSQL, NATS
// and five Tally processes) 30,000 at 500/s keep the whole file near 3 minutes. TALLY_CLUSTER_EVENTS
// and TALLY_CLUSTER_RATE run the full size.
const EVENTS = Number(process.env.TALLY_CLUSTER_EVENTS ?? 30_000)
const RATE = Number(process.env.TALLY_CLUSTER_RATE ?? 500)
const skip = !hasDist ? 'dist/ is not built (npm run test:cluster builds it)' : !hasNatsServer ? 'nats-server is not installed' : !PG_BIN ? 'PostgreSQL binaries are not installed' : false

/** Runs SQL on the test's ClickHouse (HTTP), returns the text answer. */
async function chQuery(base: string, sql: string): Promise<string> {
  const u = new URL(base)
  const res = await fetch(`http://${u.host}/`, { method: 'POST', body: sql })
  const text = await res.text()
  if (!res.ok) throw new Error(`ClickHouse: ${text}`)
  return text
}

async function decideFlag(p: TallyProcess, apiKey: string, key: string): Promise<unknown> {
  const res = await fetch(`${p.url}/decide/?v=3`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: apiKey, distinct_id: 'someone' }) })
  if (res.status !== 200) return undefined
  return ((await res.json()) as { featureFlags: Record<string, unknown> }).featureFlags[key]
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

test(`cluster on PostgreSQL + NATS + ClickHouse (2 capture, 2 worker, 1 api): ${EVENTS} events through two worker kill -9s (one between store and ack), a NATS restart, ClickHouse away 10 s and a PostgreSQL restart; each acknowledged event stored once`, { skip, timeout: 900_000 }, async (t) => {
  const pg = await startOwnPostgres()
  t.after(() => pg.destroy())
  const nats = await startOwnNatsServer(t)
  const ch = await privateClickHouse()
  t.after(() => ch.destroy())
  const root = await mkdtemp(path.join(os.tmpdir(), 'tally-cluster-'))
  t.after(() => rm(root, { recursive: true, force: true }))
  const database = 'tally_cluster'
  const env = {
    TALLY_DATABASE_URL: pg.url,
    TALLY_NATS_URL: nats.url,
    TALLY_CLICKHOUSE_URL: `${ch.url}/${database}`,
    TALLY_PROJECT_API_KEY: generateToken('phc_'),
    TALLY_PERSONAL_API_KEY: generateToken('phx_'),
    // A killed worker's messages come back after 5 s (30 s by default), to keep the test short.
    TALLY_NATS_ACK_WAIT_MS: '5000',
    TALLY_NATS_PUBLISH_TIMEOUT_MS: '2000',
    TALLY_INGEST_RETRY_MAX_MS: '2000',
    TALLY_PERSON_CACHE_WARM: 'false',
    TALLY_CAPTURE_DECODE_THREADS: '0',
  }
  const ports = await Promise.all([0, 1, 2, 3, 4].map(() => freePort()))
  const api = tallyProcess('api', ports[0]!, path.join(root, 'api'), env)
  const workers = [1, 2].map((i) => tallyProcess('worker', ports[i]!, path.join(root, `worker${i}`), env))
  const captures = [3, 4].map((i) => tallyProcess('capture', ports[i]!, path.join(root, `capture${i}`), env))
  const all = [api, ...workers, ...captures]
  t.after(() => Promise.all(all.map((p) => p.stop())))
  // The api process first: it migrates both databases and makes the project.
  await api.start()
  // Every row ever inserted into events, kept whole (the ReplacingMergeTree collapses repeated rows in
  // its merges, which would hide an event stored twice by the time the test counts).
  await chQuery(ch.url, `CREATE MATERIALIZED VIEW ${database}.inserted_audit ENGINE = MergeTree ORDER BY uuid AS SELECT uuid FROM ${database}.events`)
  // Worker 1 kills itself (SIGKILL) at the worst moment of its 15th batch: stored, not yet acknowledged.
  await Promise.all([workers[0]!.start({ TALLY_CRASH_AT: 'worker.before-ack:15' }), workers[1]!.start(), ...captures.map((p) => p.start())])

  const auth = { authorization: `Bearer ${env.TALLY_PERSONAL_API_KEY}`, 'content-type': 'application/json' }
  const flag = (await (await fetch(`${api.url}/api/projects/@current/feature_flags/`, { method: 'POST', headers: auth, body: JSON.stringify({ key: 'cluster-flag', active: true, filters: { groups: [{ properties: [], rollout_percentage: 0 }] } }) })).json()) as { id: number }
  for (const c of captures) await eventually(async () => (await decideFlag(c, env.TALLY_PROJECT_API_KEY, 'cluster-flag')) === false)

  // The faults, each once the stream has reached a share of its events.
  let progress = 0
  const reached = async (share: number) => {
    while (progress < EVENTS * share) await sleep(50)
  }
  const figures = { flagMs: [] as number[], natsDown: { from: 0, to: 0 }, selfKilledAt: 0 }
  const faults = (async () => {
    await workers[0]!.exited()
    figures.selfKilledAt = progress
    await sleep(1000)
    await workers[0]!.start()

    await reached(0.2)
    const patched = await fetch(`${api.url}/api/projects/@current/feature_flags/${flag.id}/`, { method: 'PATCH', headers: auth, body: JSON.stringify({ filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }) })
    assert.equal(patched.status, 200)
    const editedAt = performance.now()
    // Polled every 50 ms for at most ~1 s: only the LISTEN/NOTIFY change bus can bring the edit.
    await Promise.all(captures.map(async (c) => {
      await eventually(async () => (await decideFlag(c, env.TALLY_PROJECT_API_KEY, 'cluster-flag')) === true, 20, 50)
      figures.flagMs.push(Math.round(performance.now() - editedAt))
    }))

    await reached(0.3)
    await nats.stop()
    figures.natsDown.from = Date.now()
    await sleep(5000)
    figures.natsDown.to = Date.now()
    await nats.start()

    await reached(0.45)
    await workers[1]!.kill9()
    await sleep(1000)
    await workers[1]!.start()

    await reached(0.55)
    await ch.stop()
    await sleep(10_000)
    await ch.start()

    await reached(0.7)
    await pg.restart()
  })()
  const ledger: LoadLedger = await streamEvents({
    targets: captures.map((c) => c.url),
    projectKey: env.TALLY_PROJECT_API_KEY,
    events: EVENTS,
    rate: RATE,
    batchSize: 100,
    onProgress: (n) => (progress = n),
  })
  await faults

  // Every acknowledged event must reach ClickHouse; then nothing may come twice.
  const counts = async () => {
    const text = await chQuery(ch.url, `SELECT toString(uuid), count() FROM ${database}.inserted_audit GROUP BY uuid FORMAT TabSeparated`)
    return new Map(text.trim().split('\n').filter(Boolean).map((l) => l.split('\t') as [string, string]).map(([u, c]) => [u, Number(c)]))
  }
  let stored = await counts()
  for (let i = 0; i < 600 && [...ledger.acked].some((u) => !stored.has(u)); i++) {
    await sleep(500)
    stored = await counts()
  }
  const missing = [...ledger.acked].filter((u) => !stored.has(u))
  const doubled = [...stored].filter(([, c]) => c > 1)
  const erroredStored = [...ledger.errored].filter((u) => stored.has(u)).length
  const unknown = [...stored.keys()].filter((u) => !ledger.acked.has(u) && !ledger.errored.has(u))
  const status = new Map<number, number>()
  for (const r of ledger.requests) status.set(r.status, (status.get(r.status) ?? 0) + 1)
  // While NATS was away (requests sent after it stopped and answered before it started again): never a 200.
  const duringNats = ledger.requests.filter((r) => r.startMs >= figures.natsDown.from && r.endMs <= figures.natsDown.to)
  const figuresLine = {
    sent: ledger.sent,
    acked: ledger.acked.size,
    errored: ledger.errored.size,
    stored: [...stored.values()].reduce((a, b) => a + b, 0),
    storedDistinct: stored.size,
    duplicates: doubled.length,
    missing: missing.length,
    erroredButStored: erroredStored,
    requestsByStatus: Object.fromEntries(status),
    requestsWhileNatsAway: duringNats.length,
    flagPropagationMs: figures.flagMs,
    worker1KilledAfterSent: figures.selfKilledAt,
    peakRssMb: Object.fromEntries(all.map((p, i) => [`${p.role}${i}`, p.peakRssMb()])),
  }
  console.log(`# cluster figures: ${JSON.stringify(figuresLine)}`)
  assert.deepEqual(missing.slice(0, 5), [], `${missing.length} acknowledged events were not stored`)
  assert.deepEqual(doubled.slice(0, 5), [], `${doubled.length} events were stored more than once`)
  assert.deepEqual(unknown.slice(0, 5), [], 'an event no one sent was stored')
  assert.ok(duringNats.length > 0, 'no request was answered while NATS was away')
  assert.deepEqual(duringNats.filter((r) => r.status === 200).map((r) => r.startMs), [], 'capture answered 200 while NATS was away')
  assert.ok(duringNats.every((r) => r.status === 503), `while NATS was away: ${JSON.stringify(duringNats.map((r) => r.status))}`)
  assert.equal(figures.flagMs.length, 2)
})
