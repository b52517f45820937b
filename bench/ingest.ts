// npm run bench:ingest — ingestion throughput of Tally on its embedded stores, against a bare
// Fastify route as the ceiling, measured in the same run with autocannon. Not a test: it prints.
// BENCH_SECONDS (default 10) sets each load phase's length. BENCH_PROFILE=dir writes V8 CPU profiles of
// the server (main and decode threads); BENCH_PERF=dir records each Tally phase with `perf record`
// (every thread: DuckDB's, GC helpers, the kernel's share of the process) into dir/<phase>.data, JS
// frames named through --perf-basic-prof (`perf report -i dir/batch.data --sort dso,sym`).
// `-- --stack scale` adds, in the same run, the /batch/ phase on the scale stack (capture, worker and api
// processes on PostgreSQL, NATS JetStream and ClickHouse: bench/ingest-scale.ts), with the CPU per 1,000
// events of each role and of NATS and ClickHouse themselves.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import { generateToken } from '../src/shared/ids.ts'
import { openDuckDb } from '../src/storage/duckdb/open-duckdb.ts'
import { MIGRATIONS } from '../src/app/create-adapters.ts'
import { benchNodeArgs, tallyMain, cpuSeconds, rssMb, startServer, stopServer, TALLY_READY } from './server-process.ts'
import { runScaleStack } from './ingest-scale.ts'
import { gzipBatchBody, gzipPersonsHeavyBody, singleEventBody, PERSONS_HEAVY_USERS } from './ingest-payloads.ts'
import { alternateRounds, gzipNotifyBody, NOTIFY_ACTIONS, NOTIFY_SERVER_ENV, percentile, setUpNotifications, startReceivers } from './ingest-notify.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const BATCH_SIZE = 100
/** BENCH_NOTIFY=1: after the plain /batch/ phase, the same load with 10 notifying actions and 2 destinations (ingest-notify.ts). */
const NOTIFY = process.env.BENCH_NOTIFY === '1'
const NOTIFY_ROUNDS = Number(process.env.BENCH_NOTIFY_ROUNDS ?? 0)
/**
 * BENCH_NOTIFY_RATE=events/s: the rounds send at that rate (one a rate ingestion keeps up with) instead
 * of as fast as answered; `auto`: three quarters of the plain phase's durable-and-readable rate.
 */
const NOTIFY_RATE_SETTING = process.env.BENCH_NOTIFY_RATE ?? '0'

/** `amount`: that many requests, every one counted, instead of BENCH_SECONDS of load. */
async function load(url: string, connections: number, bodies: Array<string | Buffer>, headers: Record<string, string>, amount?: number, ratePerSecond?: number) {
  let k = 0
  return autocannon({
    url,
    connections,
    ...(amount ? { amount } : { duration: SECONDS }),
    ...(ratePerSecond ? { overallRate: ratePerSecond } : {}),
    method: 'POST',
    headers,
    requests: [{ setupRequest: (req) => ({ ...req, body: bodies[k++ % bodies.length] }) }],
  })
}

async function waitReadable(url: string, projectId: number, uuid: string, auth: string): Promise<void> {
  for (;;) {
    const res = await fetch(`${url}/api/projects/${projectId}/events/${uuid}/`, { headers: { authorization: auth } })
    if (res.status === 200) return
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** `perf record` of the process over one phase at a time when BENCH_PERF names a directory; else nothing. */
function perfRecorder(pid: number) {
  const dir = process.env.BENCH_PERF
  let rec: ChildProcess | null = null
  return {
    async start(phase: string) {
      if (!dir) return
      rec = spawn('perf', ['record', '-F', '997', '--call-graph', process.env.BENCH_PERF_CALL_GRAPH ?? 'fp', '-p', String(pid), '-o', path.join(dir, `${phase}.data`)], { stdio: 'ignore' })
      await new Promise((r) => setTimeout(r, 300))
    },
    async stop() {
      if (!rec) return
      const done = new Promise((r) => rec!.once('exit', r))
      rec.kill('SIGINT')
      await done
      rec = null
    },
  }
}

/** bench/webhook-ceiling.ts in a process of its own: Tally's webhook client alone, its CPU µs per message. */
async function webhookCeiling(urls: string[], messages: number): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/webhook-ceiling.ts', urls.join(','), String(Math.max(messages, 1000)), String(2 * Number(NOTIFY_SERVER_ENV.TALLY_WEBHOOK_CONCURRENCY))], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()))
  const code = await new Promise((r) => child.once('exit', r))
  if (code !== 0) throw new Error(`webhook-ceiling exited ${code}`)
  return (JSON.parse(out) as { cpuUsPerMessage: number }).cpuUsPerMessage
}

async function main() {
  const token = generateToken('phc_')
  const personal = generateToken('phx_')
  const auth = `Bearer ${personal}`
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-bench-'))
  const batchBodies = Array.from({ length: 8 }, (_, i) => gzipBatchBody(token, BATCH_SIZE, i))
  const singleBodies = Array.from({ length: 64 }, (_, i) => singleEventBody(token, i))
  // 1,000 bodies of 100 events: every one of the 100,000 users appears before a body repeats.
  const personsBodies = Array.from({ length: PERSONS_HEAVY_USERS / BATCH_SIZE }, (_, i) => gzipPersonsHeavyBody(token, BATCH_SIZE, i))
  const gzipHeaders = { 'content-type': 'application/json', 'content-encoding': 'gzip' }
  const jsonHeaders = { 'content-type': 'application/json' }

  // Ceiling first, alone on the machine.
  const ceiling = await startServer(['--import', 'tsx', 'bench/ceiling-server.ts'], { ready: /ceiling ready on (http:\/\/\S+)/ })
  const ceilBatch = await load(`${ceiling.url}/batch/`, 32, batchBodies, gzipHeaders)
  // The ceiling: gunzip + JSON.parse + HTTP on one process (its CPU per 1,000 events too).
  const parseCpu0 = cpuSeconds(ceiling.pid)
  const ceilParse = await load(`${ceiling.url}/parse/`, 32, batchBodies, gzipHeaders)
  const parseCpuMsPer1000 = (1000 * 1000 * (cpuSeconds(ceiling.pid) - parseCpu0)) / (ceilParse['2xx'] * BATCH_SIZE)
  const ceilSingle = await load(`${ceiling.url}/e/`, 100, singleBodies, jsonHeaders)
  await stopServer(ceiling)

  // BENCH_PROFILE, BENCH_NODE_ARGS (benchNodeArgs); BENCH_SERVER_LOG: a file for the server's output.
  const profile = benchNodeArgs()
  if (process.env.BENCH_PERF) profile.push('--perf-basic-prof')
  const tally = await startServer([...profile, tallyMain(), 'serve', '--port', '0', '--data-dir', dataDir], {
    env: { TALLY_PROJECT_API_KEY: token, TALLY_PERSONAL_API_KEY: personal, TALLY_LOG_LEVEL: 'info', ...(NOTIFY ? NOTIFY_SERVER_ENV : {}) },
    ready: TALLY_READY,
    log: true,
  })
  const projectId = ((await (await fetch(`${tally.url}/api/projects/`, { headers: { authorization: auth } })).json()) as { results: Array<{ id: number }> }).results[0]!.id

  const sentinel = async () => {
    const uuid = crypto.randomUUID()
    const res = await fetch(`${tally.url}/batch/`, { method: 'POST', headers: jsonHeaders, body: JSON.stringify({ api_key: token, batch: [{ event: 'sentinel', distinct_id: 's', uuid }] }) })
    if (res.status !== 200) throw new Error(`sentinel answered ${res.status}`)
    return uuid
  }

  const perf = perfRecorder(tally.pid)
  const cpu0 = cpuSeconds(tally.pid)
  await perf.start('batch')
  const t0 = performance.now()
  const batch = await load(`${tally.url}/batch/`, 32, batchBodies, gzipHeaders)
  const batchUuid = await sentinel()
  await waitReadable(tally.url, projectId, batchUuid, auth)
  const batchReadableSec = (performance.now() - t0) / 1000
  const batchCpu = cpuSeconds(tally.pid) - cpu0
  await perf.stop()

  // In whole requests per second (autocannon's overallRate).
  const NOTIFY_RATE = NOTIFY_RATE_SETTING === 'auto' ? BATCH_SIZE * Math.max(1, Math.round((0.75 * batch['2xx']) / batchReadableSec)) : Number(NOTIFY_RATE_SETTING)
  const notified = NOTIFY ? await notifyPhase() : null
  // BENCH_NOTIFY_ROUNDS=n (with BENCH_NOTIFY=1): plain and notifying rounds alternately (ingest-notify.ts).
  const rounds = NOTIFY && NOTIFY_ROUNDS > 0
    ? await alternateRounds({
        url: tally.url,
        projectId,
        auth,
        load: async (bodies, requests) => (await load(`${tally.url}/batch/`, 32, bodies, gzipHeaders, requests, NOTIFY_RATE ? NOTIFY_RATE / BATCH_SIZE : undefined))['2xx'] * BATCH_SIZE,
        readable: async () => waitReadable(tally.url, projectId, await sentinel(), auth),
        cpu: () => cpuSeconds(tally.pid),
      }, NOTIFY_ROUNDS, token, BATCH_SIZE)
    : []
  async function notifyPhase() {
    const receivers = await startReceivers()
    await setUpNotifications(tally.url, projectId, auth, receivers)
    const bodies = Array.from({ length: 8 }, (_, i) => gzipNotifyBody(token, BATCH_SIZE, i))
    await perf.start('notify')
    const cpuN = cpuSeconds(tally.pid)
    const tN = performance.now()
    const run = await load(`${tally.url}/batch/`, 32, bodies, gzipHeaders)
    const uuid = await sentinel()
    await waitReadable(tally.url, projectId, uuid, auth)
    const events = run['2xx'] * BATCH_SIZE
    // Every accepted event of the phase with half = yes goes to both destinations (stored may exceed accepted: see below).
    const expected = events
    const deadline = performance.now() + 120_000
    while (receivers.destinations.count < expected && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    const deliveredSec = (performance.now() - tN) / 1000
    const cpu = cpuSeconds(tally.pid) - cpuN
    await perf.stop()
    const destinations = { count: receivers.destinations.count, delays: [...receivers.destinations.delays] }
    const chat = receivers.chat.count
    // The ceiling: the same client alone, the same number of messages to the same receivers.
    const ceiling = await webhookCeiling([receivers.url('/warehouse'), receivers.url('/crm')], destinations.count)
    await receivers.close()
    return { run, events, deliveredSec, cpu, destinations, chat, ceiling }
  }

  await perf.start('persons')
  const cpuP = cpuSeconds(tally.pid)
  const tP = performance.now()
  const persons = await load(`${tally.url}/batch/`, 32, personsBodies, gzipHeaders)
  const personsUuid = await sentinel()
  await waitReadable(tally.url, projectId, personsUuid, auth)
  const personsReadableSec = (performance.now() - tP) / 1000
  const personsCpu = cpuSeconds(tally.pid) - cpuP
  await perf.stop()

  await perf.start('single')
  const cpu1 = cpuSeconds(tally.pid)
  const t1 = performance.now()
  const single = await load(`${tally.url}/e/`, 100, singleBodies, jsonHeaders)
  const singleUuid = await sentinel()
  await waitReadable(tally.url, projectId, singleUuid, auth)
  const singleReadableSec = (performance.now() - t1) / 1000
  const singleCpu = cpuSeconds(tally.pid) - cpu1
  await perf.stop()
  const rss = Math.round(rssMb(tally.pid).peak)

  await stopServer(tally)
  const duck = await openDuckDb(path.join(dataDir, 'events', 'events.duckdb'), MIGRATIONS.duckdb)
  const counts = (await duck.connection.runAndReadAll(`SELECT count(*) AS n, count(*) - count(DISTINCT uuid) AS duplicates, count(*) FILTER (WHERE person_id IS NULL) AS personless FROM events WHERE event <> 'sentinel'`)).getRowObjects()[0]!
  const stored = Number(counts.n)
  const personless = Number(counts.personless)
  const duplicates = Number(counts.duplicates)
  await duck.close()
  await rm(dataDir, { recursive: true, force: true })

  const batchEvents = batch['2xx'] * BATCH_SIZE
  const singleEvents = single['2xx']
  const personsEvents = persons['2xx'] * BATCH_SIZE
  const row = (name: string, v: string) => console.log(`${name.padEnd(44)} ${v}`)
  const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(0)}% of ceiling`
  console.log(`\nTally ingestion benchmark: ${SECONDS}s per phase, ${os.cpus().length} CPUs, Node ${process.version}\n`)
  row('ceiling /batch/ (bare Fastify, gzip 100 ev)', `${batch.requests.average.toFixed(0)} req/s vs ${ceilBatch.requests.average.toFixed(0)} req/s ceiling (${pct(batch.requests.average, ceilBatch.requests.average)})`)
  const parseEvPerSec = (ceilParse['2xx'] * BATCH_SIZE) / ceilParse.duration
  const ratio = (evPerSec: number) => `${(evPerSec / parseEvPerSec).toFixed(3)}x the parse-only ceiling`
  row('parse-only ceiling /batch/ (gunzip + parse)', `${parseEvPerSec.toFixed(0)} events/s, ${parseCpuMsPer1000.toFixed(1)} ms CPU per 1,000 events`)
  row('/batch/ events/s accepted (durable)', `${(batchEvents / batch.duration).toFixed(0)} = ${ratio(batchEvents / batch.duration)} (${batch['2xx']} requests, non-2xx ${batch.non2xx})`)
  row('/batch/ events/s durable and readable', `${(batchEvents / batchReadableSec).toFixed(0)} = ${ratio(batchEvents / batchReadableSec)} (last event readable ${batchReadableSec.toFixed(1)}s after start)`)
  row('/batch/ Tally CPU per 1,000 events', `${((1000 * 1000 * batchCpu) / batchEvents).toFixed(0)} ms (all threads, accept to stored)`)
  row('/batch/ latency p50 / p99', `${batch.latency.p50} ms / ${batch.latency.p99} ms (ceiling ${ceilBatch.latency.p50} / ${ceilBatch.latency.p99} ms)`)
  if (notified) {
    const { events, destinations, chat, cpu, deliveredSec } = notified
    const plainMs = (1000 * 1000 * batchCpu) / batchEvents
    const notifyMs = (1000 * 1000 * cpu) / events
    row('/batch/ + notifications events/s accepted', `${(events / notified.run.duration).toFixed(0)} (${NOTIFY_ACTIONS} notifying actions, 2 destinations on half the events; non-2xx ${notified.run.non2xx})`)
    row('/batch/ + notifications CPU per 1,000 events', `${notifyMs.toFixed(0)} ms vs ${plainMs.toFixed(0)} plain (${notifyMs >= plainMs ? '+' : ''}${((100 * (notifyMs - plainMs)) / plainMs).toFixed(0)}%; accept to stored and every message delivered, ${deliveredSec.toFixed(1)}s)`)
    row('destination messages delivered', `${destinations.count} of ${events} expected; chat messages ${chat}`)
    row('destination delivery delay p50 / p99 / max', `${percentile(destinations.delays, 50)} / ${percentile(destinations.delays, 99)} / ${percentile(destinations.delays, 100)} ms after the event was received`)
    // What the messages cost at the least: the ceiling's CPU per message, times the messages per event.
    const floorMs = (notified.ceiling * (destinations.count + chat)) / events
    const beyond = notifyMs - plainMs - floorMs
    row('webhook client alone (ceiling)', `${notified.ceiling.toFixed(0)} µs CPU per message = ${floorMs.toFixed(0)} ms per 1,000 events (${((100 * floorMs) / plainMs).toFixed(0)}% of plain)`)
    row('notifications beyond the client alone', `${beyond.toFixed(0)} ms per 1,000 events (${((100 * beyond) / plainMs).toFixed(0)}% of plain)`)
  }
  rounds.forEach((r, i) => {
    if (i === 0 && NOTIFY_RATE) row('rounds paced at', `${NOTIFY_RATE} events/s (BENCH_NOTIFY_RATE=${NOTIFY_RATE_SETTING})`)
    row(`round ${i + 1}: CPU per 1,000 events off / on`, `${r.plainMsPer1000.toFixed(0)} / ${r.notifyMsPer1000.toFixed(0)} ms (${(r.notifyMsPer1000 / r.plainMsPer1000).toFixed(3)}x); ${r.delivered} of ${r.expected} delivered, p99 ${r.p99} ms`)
  })
  const plainReadable = batchEvents / batchReadableSec
  const personsReadable = personsEvents / personsReadableSec
  row('persons-heavy /batch/ events/s accepted', `${(personsEvents / persons.duration).toFixed(0)} (${PERSONS_HEAVY_USERS.toLocaleString('en')} users, 10 % $set, 1 % $identify; non-2xx ${persons.non2xx})`)
  row('persons-heavy events/s durable and readable', `${personsReadable.toFixed(0)} (${((100 * personsReadable) / plainReadable).toFixed(0)}% of the plain run; last readable ${personsReadableSec.toFixed(1)}s after start)`)
  row('persons-heavy Tally CPU per 1,000 events', `${((1000 * 1000 * personsCpu) / personsEvents).toFixed(0)} ms (all threads, accept to stored with person_id)`)
  row('/e/ requests (= events)/s accepted', `${single.requests.average.toFixed(0)} vs ${ceilSingle.requests.average.toFixed(0)} ceiling (${pct(single.requests.average, ceilSingle.requests.average)}), non-2xx ${single.non2xx}`)
  row('/e/ events/s durable and readable', `${(singleEvents / singleReadableSec).toFixed(0)}`)
  row('/e/ Tally CPU per 1,000 events', `${((1000 * 1000 * singleCpu) / singleEvents).toFixed(0)} ms (all threads, accept to stored)`)
  row('/e/ latency p50 / p99', `${single.latency.p50} ms / ${single.latency.p99} ms (ceiling ${ceilSingle.latency.p50} / ${ceilSingle.latency.p99} ms)`)
  row('peak RSS of the Tally process', `${rss} MB`)
  // autocannon counts only the requests answered within the phase, so stored may exceed accepted
  // (requests answered 200 after the cut); fewer stored than accepted would be a loss.
  const accepted = batchEvents + personsEvents + singleEvents + (notified?.events ?? 0)
  row('stored events without a person_id', `${personless}${personless === 0 ? '' : ' (every benchmark event should have one)'}`)
  row('events stored twice (same uuid)', `${duplicates}`)
  row('events stored vs accepted', `${stored} / ${accepted}${stored >= accepted ? ' (none lost)' : ' (LOST EVENTS)'}`)

  const argv = process.argv.slice(2)
  if (argv[argv.indexOf('--stack') + 1] !== 'scale' || !argv.includes('--stack')) return
  const scale = await runScaleStack({
    token,
    personal,
    async load(url) {
      const r = await load(`${url}/batch/`, 32, batchBodies, gzipHeaders)
      return { events: r['2xx'] * BATCH_SIZE, seconds: r.duration }
    },
    async waitReadable(captureUrl, apiUrl) {
      const uuid = crypto.randomUUID()
      const res = await fetch(`${captureUrl}/batch/`, { method: 'POST', headers: jsonHeaders, body: JSON.stringify({ api_key: token, batch: [{ event: 'sentinel', distinct_id: 's', uuid }] }) })
      if (res.status !== 200) throw new Error(`sentinel answered ${res.status}`)
      const pid = ((await (await fetch(`${apiUrl}/api/projects/`, { headers: { authorization: auth } })).json()) as { results: Array<{ id: number }> }).results[0]!.id
      await waitReadable(apiUrl, pid, uuid, auth)
    },
  })
  const perK = (cpuSec: number, events: number) => (1000 * 1000 * cpuSec) / events
  const embeddedPerK = perK(batchCpu, batchEvents)
  const c = scale.cpu
  const ev = scale.acceptedEvents
  const tallyPerK = perK(c.capture + c.worker, ev)
  console.log(`\nThe same /batch/ load (gzip, ${BATCH_SIZE} events a request, 32 connections, ${SECONDS}s), embedded vs scale stack (1 capture, 1 worker, 1 api)\n`)
  row('embedded: accepted / readable events/s', `${(batchEvents / batch.duration).toFixed(0)} = ${ratio(batchEvents / batch.duration)} / ${plainReadable.toFixed(0)} = ${ratio(plainReadable)}`)
  row('scale: accepted / readable events/s', `${(ev / scale.acceptedSeconds).toFixed(0)} = ${ratio(ev / scale.acceptedSeconds)} / ${(ev / scale.readableSeconds).toFixed(0)} = ${ratio(ev / scale.readableSeconds)}`)
  row('embedded: Tally CPU per 1,000 events', `${embeddedPerK.toFixed(0)} ms = ${(embeddedPerK / parseCpuMsPer1000).toFixed(1)}x the ceiling's ${parseCpuMsPer1000.toFixed(1)} ms`)
  row('scale: capture + worker CPU per 1,000 events', `${tallyPerK.toFixed(0)} ms = ${(tallyPerK / parseCpuMsPer1000).toFixed(1)}x the ceiling's`)
  row('scale: CPU per 1,000 events by process', `capture ${perK(c.capture, ev).toFixed(0)} ms, worker ${perK(c.worker, ev).toFixed(0)} ms, api ${perK(c.api, ev).toFixed(0)} ms, NATS ${perK(c.nats, ev).toFixed(0)} ms, ClickHouse ${perK(c.clickhouse, ev).toFixed(0)} ms (PostgreSQL not counted)`)
  row('scale: peak RSS by process', `capture ${scale.peakRssMb.capture} MB, worker ${scale.peakRssMb.worker} MB, api ${scale.peakRssMb.api} MB`)
}

await main()
