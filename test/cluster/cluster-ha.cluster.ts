import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { generateToken } from '../../src/shared/ids.ts'
import { freePort, privateClickHouse } from '../helpers/clickhouse.ts'
import { hasNatsServer } from '../helpers/nats-server.ts'
import { startNatsCluster } from '../helpers/nats-cluster.ts'
import { PG_BIN, startOwnPostgres } from '../helpers/own-postgres.ts'
import { hasDist, tallyProcess } from '../helpers/cluster-process.ts'
import { streamEvents } from '../helpers/cluster-load.ts'

// 15,000 events at 500/s: ~30 s of stream, the leader killed at 40 % and started again at 85 %.
const EVENTS = Number(process.env.TALLY_CLUSTER_EVENTS ?? 15_000)
const RATE = Number(process.env.TALLY_CLUSTER_RATE ?? 500)
const skip = !hasDist ? 'dist/ is not built (npm run test:cluster builds it)' : !hasNatsServer ? 'nats-server is not installed' : !PG_BIN ? 'PostgreSQL binaries are not installed' : false
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function chQuery(base: string, sql: string): Promise<string> {
  const res = await fetch(`http://${new URL(base).host}/`, { method: 'POST', body: sql })
  const text = await res.text()
  if (!res.ok) throw new Error(`ClickHouse: ${text}`)
  return text
}

test(`HA: a 3-node NATS cluster (stream replicas 3) loses its stream leader (kill -9) mid-stream of ${EVENTS} events; every acknowledged event is stored once`, { skip, timeout: 600_000 }, async (t) => {
  const pg = await startOwnPostgres()
  t.after(() => pg.destroy())
  const nats = await startNatsCluster(3)
  t.after(() => nats.destroy())
  const ch = await privateClickHouse()
  t.after(() => ch.destroy())
  const root = await mkdtemp(path.join(os.tmpdir(), 'tally-ha-'))
  t.after(() => rm(root, { recursive: true, force: true }))
  const database = 'tally_ha'
  const env = {
    TALLY_DATABASE_URL: pg.url,
    TALLY_NATS_URL: nats.urls,
    TALLY_NATS_REPLICAS: '3',
    TALLY_CLICKHOUSE_URL: `${ch.url}/${database}`,
    TALLY_PROJECT_API_KEY: generateToken('phc_'),
    TALLY_PERSONAL_API_KEY: generateToken('phx_'),
    TALLY_NATS_ACK_WAIT_MS: '5000',
    TALLY_NATS_PUBLISH_TIMEOUT_MS: '2000',
    TALLY_INGEST_RETRY_MAX_MS: '2000',
    TALLY_PERSON_CACHE_WARM: 'false',
    TALLY_CAPTURE_DECODE_THREADS: '0',
  }
  const ports = await Promise.all([0, 1, 2, 3, 4].map(() => freePort()))
  const api = tallyProcess('api', ports[0]!, path.join(root, 'api'), env)
  const others = [1, 2].map((i) => tallyProcess('worker', ports[i]!, path.join(root, `worker${i}`), env))
  const captures = [3, 4].map((i) => tallyProcess('capture', ports[i]!, path.join(root, `capture${i}`), env))
  const all = [api, ...others, ...captures]
  t.after(() => Promise.all(all.map((p) => p.stop())))
  await api.start()
  await chQuery(ch.url, `CREATE MATERIALIZED VIEW ${database}.inserted_audit ENGINE = MergeTree ORDER BY uuid AS SELECT uuid FROM ${database}.events`)
  await Promise.all([...others, ...captures].map((p) => p.start()))

  let progress = 0
  const reached = async (share: number) => {
    while (progress < EVENTS * share) await sleep(50)
  }
  const fault = { leader: '', newLeader: '', downFrom: 0, downTo: 0 }
  const faults = (async () => {
    await reached(0.4)
    fault.leader = await nats.streamLeader('TALLY_EVENTS')
    const node = nats.nodes.find((n) => n.name === fault.leader)!
    await node.kill9()
    fault.downFrom = Date.now()
    await reached(0.85)
    fault.newLeader = await nats.streamLeader('TALLY_EVENTS').catch((err: unknown) => String(err))
    await node.start()
    fault.downTo = Date.now()
  })()
  const ledger = await streamEvents({ targets: captures.map((c) => c.url), projectKey: env.TALLY_PROJECT_API_KEY, events: EVENTS, rate: RATE, batchSize: 100, onProgress: (n) => (progress = n) })
  await faults

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
  const unknown = [...stored.keys()].filter((u) => !ledger.acked.has(u) && !ledger.errored.has(u))
  const status = new Map<number, number>()
  for (const r of ledger.requests) status.set(r.status, (status.get(r.status) ?? 0) + 1)
  const during = ledger.requests.filter((r) => r.startMs >= fault.downFrom && r.endMs <= fault.downTo)
  console.log(`# HA figures: ${JSON.stringify({ sent: ledger.sent, acked: ledger.acked.size, errored: ledger.errored.size, stored: [...stored.values()].reduce((a, b) => a + b, 0), duplicates: doubled.length, missing: missing.length, requestsByStatus: Object.fromEntries(status), killedLeader: fault.leader, newLeader: fault.newLeader, requestsWhileLeaderDown: during.length, okWhileLeaderDown: during.filter((r) => r.status === 200).length, statusWhileLeaderDown: [...during].sort((a, b) => a.startMs - b.startMs).map((r) => (r.status === 200 ? '.' : 'x')).join('') })}`)
  assert.deepEqual(missing.slice(0, 5), [], `${missing.length} acknowledged events were not stored`)
  assert.deepEqual(doubled.slice(0, 5), [], `${doubled.length} events were stored more than once`)
  assert.deepEqual(unknown.slice(0, 5), [], 'an event no one sent was stored')
  assert.notEqual(fault.newLeader, fault.leader, 'the stream did not elect another leader')
  // While JetStream elects a new leader publishes fail: capture answers 503 (never a 200 it cannot keep). Once the
  // first 200 came back, the stream took every request on the two nodes left, the old leader still down.
  assert.ok(during.every((r) => r.status === 200 || r.status === 503), `while the leader was down: ${JSON.stringify(during.map((r) => r.status))}`)
  const firstOk = Math.min(...during.filter((r) => r.status === 200).map((r) => r.endMs))
  const afterElection = during.filter((r) => r.startMs > firstOk)
  assert.ok(afterElection.length > 0, 'no request was answered after the new leader took over while the old one was down')
  assert.deepEqual(afterElection.filter((r) => r.status !== 200).map((r) => r.status), [], 'a request failed after the new leader took over')
})
