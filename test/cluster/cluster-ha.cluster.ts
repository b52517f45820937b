import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { generateToken } from '../../src/shared/ids.ts'
import { freePort, type PrivateClickHouse } from '../helpers/clickhouse.ts'
import { clickHouseReplicas, hasZooKeeper, privateZooKeeper } from '../helpers/zookeeper.ts'
import { hasNatsServer } from '../helpers/nats-server.ts'
import { startNatsCluster } from '../helpers/nats-cluster.ts'
import { PG_BIN, startOwnPostgres } from '../helpers/own-postgres.ts'
import { hasDist, tallyProcess } from '../helpers/cluster-process.ts'
import { streamEvents } from '../helpers/cluster-load.ts'

// 15,000 events at 500/s: ~30 s of stream. The ClickHouse replica Tally writes to is killed at 25 % and
// started again at 70 %; the NATS stream leader is killed at 40 % and started again at 85 %.
const EVENTS = Number(process.env.TALLY_CLUSTER_EVENTS ?? 15_000)
const RATE = Number(process.env.TALLY_CLUSTER_RATE ?? 500)
const skip = !hasDist ? 'dist/ is not built (npm run test:cluster builds it)' : !hasNatsServer ? 'nats-server is not installed' : !PG_BIN ? 'PostgreSQL binaries are not installed' : !hasZooKeeper ? 'zookeeper is not installed' : false
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function chQuery(server: PrivateClickHouse, sql: string): Promise<string> {
  const res = await fetch(`http://${new URL(server.url).host}/`, { method: 'POST', body: sql })
  const text = await res.text()
  if (!res.ok) throw new Error(`ClickHouse: ${text}`)
  return text
}

test(`HA: a 3-node NATS cluster (stream replicas 3) loses its stream leader and 2 ClickHouse replicas (ZooKeeper) the one written to (kill -9 each) mid-stream of ${EVENTS} events; every acknowledged event is stored once on each replica; queries are answered meanwhile`, { skip, timeout: 600_000 }, async (t) => {
  const pg = await startOwnPostgres()
  t.after(() => pg.destroy())
  const nats = await startNatsCluster(3)
  t.after(() => nats.destroy())
  const zk = await privateZooKeeper()
  t.after(() => zk.destroy())
  const replicas = await clickHouseReplicas(2, zk.port)
  t.after(() => Promise.all(replicas.map((r) => r.destroy())))
  const [r1, r2] = [replicas[0]!, replicas[1]!]
  const root = await mkdtemp(path.join(os.tmpdir(), 'tally-ha-'))
  t.after(() => rm(root, { recursive: true, force: true }))
  const database = 'tally_ha'
  const env = {
    TALLY_DATABASE_URL: pg.url,
    TALLY_NATS_URL: nats.urls,
    TALLY_NATS_REPLICAS: '3',
    // Both replicas: r1 is tried first, so the kill of r1 is the one Tally must fail over from.
    TALLY_CLICKHOUSE_URL: replicas.map((r) => `${r.url}/${database}`).join(','),
    TALLY_CLICKHOUSE_CLUSTER: 'tally',
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
  // Every row an insert put into `events`, on whichever replica took it, before merges could collapse a
  // duplicate: the view fires on the replica that took the insert, its table is replicated like `events`
  // (an insert repeated whole is dropped by its block hash in both, as ClickHouse does for `events`).
  await chQuery(r1, `CREATE MATERIALIZED VIEW ${database}.inserted_audit ON CLUSTER tally ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${database}/inserted_audit', '{replica}') ORDER BY uuid AS SELECT uuid FROM ${database}.events`)
  await Promise.all([...others, ...captures].map((p) => p.start()))

  let progress = 0
  const reached = async (share: number) => {
    while (progress < EVENTS * share) await sleep(50)
  }
  const fault = { leader: '', newLeader: '', downFrom: 0, downTo: 0, replicaDownFrom: 0, replicaDownTo: 0, auditOnR2AtKill: 0, auditOnR2AtRestart: 0 }
  const audited = async (server: PrivateClickHouse) => Number(await chQuery(server, `SELECT count() FROM ${database}.inserted_audit`))
  // A trends query through the api process while r1 is down: answered, from r2.
  const trends = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'cluster_event', math: 'total' }], dateRange: { date_from: '-1d' }, interval: 'day' }
  const queriesWhileReplicaDown: Array<{ status: number; total: number }> = []
  const replicaFault = (async () => {
    await reached(0.25)
    await r1.kill9()
    fault.replicaDownFrom = Date.now()
    fault.auditOnR2AtKill = await audited(r2)
    while (progress < EVENTS * 0.7) {
      const res = await fetch(`${api.url}/api/projects/@current/query/`, { method: 'POST', headers: { authorization: `Bearer ${env.TALLY_PERSONAL_API_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: trends }) })
      const body = (await res.json()) as { results?: Array<{ count: number }> }
      queriesWhileReplicaDown.push({ status: res.status, total: (body.results ?? []).reduce((a, r) => a + r.count, 0) })
      await sleep(1000)
    }
    fault.auditOnR2AtRestart = await audited(r2)
    await r1.start()
    fault.replicaDownTo = Date.now()
  })()
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
  await replicaFault

  const countsOn = async (server: PrivateClickHouse) => {
    const text = await chQuery(server, `SELECT toString(uuid), count() FROM ${database}.inserted_audit GROUP BY uuid FORMAT TabSeparated`)
    return new Map(text.trim().split('\n').filter(Boolean).map((l) => l.split('\t') as [string, string]).map(([u, c]) => [u, Number(c)]))
  }
  /** The audit of `server` once it holds every acknowledged event (or after 2 min). */
  const settledCounts = async (server: PrivateClickHouse) => {
    let counts = await countsOn(server)
    for (let i = 0; i < 240 && [...ledger.acked].some((u) => !counts.has(u)); i++) {
      await sleep(500)
      counts = await countsOn(server)
    }
    return counts
  }
  // r2 (the replica that stayed up) first, then r1 (killed, restarted, caught up): the same rows.
  const stored = await settledCounts(r2)
  const storedOnR1 = await settledCounts(r1)
  const eventsOn = async (server: PrivateClickHouse) => Number(await chQuery(server, `SELECT count() FROM ${database}.events`))
  const missing = [...ledger.acked].filter((u) => !stored.has(u))
  const doubled = [...stored].filter(([, c]) => c > 1)
  const unknown = [...stored.keys()].filter((u) => !ledger.acked.has(u) && !ledger.errored.has(u))
  const status = new Map<number, number>()
  for (const r of ledger.requests) status.set(r.status, (status.get(r.status) ?? 0) + 1)
  const during = ledger.requests.filter((r) => r.startMs >= fault.downFrom && r.endMs <= fault.downTo)
  console.log(`# HA figures: ${JSON.stringify({ sent: ledger.sent, acked: ledger.acked.size, errored: ledger.errored.size, stored: [...stored.values()].reduce((a, b) => a + b, 0), duplicates: doubled.length, missing: missing.length, requestsByStatus: Object.fromEntries(status), replicaEvents: { r1: await eventsOn(r1), r2: await eventsOn(r2) }, insertsOnR2WhileR1Down: fault.auditOnR2AtRestart - fault.auditOnR2AtKill, queriesWhileR1Down: queriesWhileReplicaDown.map((q) => `${q.status}:${q.total}`).join(' '), killedLeader: fault.leader, newLeader: fault.newLeader, requestsWhileLeaderDown: during.length, okWhileLeaderDown: during.filter((r) => r.status === 200).length, statusWhileLeaderDown: [...during].sort((a, b) => a.startMs - b.startMs).map((r) => (r.status === 200 ? '.' : 'x')).join('') })}`)
  assert.deepEqual(missing.slice(0, 5), [], `${missing.length} acknowledged events were not stored`)
  assert.deepEqual(doubled.slice(0, 5), [], `${doubled.length} events were stored more than once`)
  assert.deepEqual(unknown.slice(0, 5), [], 'an event no one sent was stored')
  assert.deepEqual([...storedOnR1].filter(([u, c]) => stored.get(u) !== c).slice(0, 5), [], 'the restarted replica differs from the one that stayed up')
  assert.equal(storedOnR1.size, stored.size, 'the restarted replica differs from the one that stayed up')
  assert.equal(await eventsOn(r1), await eventsOn(r2), 'the events tables of the two replicas differ')
  assert.ok(fault.auditOnR2AtRestart > fault.auditOnR2AtKill, 'nothing was inserted while the replica written to was down')
  assert.ok(queriesWhileReplicaDown.length > 0, 'no query was made while the replica was down')
  assert.deepEqual(queriesWhileReplicaDown.filter((q) => q.status !== 200), [], 'a query failed while one ClickHouse replica was down')
  assert.ok(queriesWhileReplicaDown.at(-1)!.total > 0, 'the queries while the replica was down saw no events')
  assert.notEqual(fault.newLeader, fault.leader, 'the stream did not elect another leader')
  // While JetStream elects a new leader publishes fail: capture answers 503 (never a 200 it cannot keep). Once the
  // first 200 came back, the stream took every request on the two nodes left, the old leader still down.
  assert.ok(during.every((r) => r.status === 200 || r.status === 503), `while the leader was down: ${JSON.stringify(during.map((r) => r.status))}`)
  const firstOk = Math.min(...during.filter((r) => r.status === 200).map((r) => r.endMs))
  const afterElection = during.filter((r) => r.startMs > firstOk)
  assert.ok(afterElection.length > 0, 'no request was answered after the new leader took over while the old one was down')
  assert.deepEqual(afterElection.filter((r) => r.status !== 200).map((r) => r.status), [], 'a request failed after the new leader took over')
})
