// npm run bench:soak — Tally's memory over a long mixed load: /batch/ (gzip, 100 posthog-js events a
// request) and /flags?v=2 (50 flags) at steady rates (bench/paced-load.ts: evenly spaced requests, not
// autocannon's bursts at the top of each second) for SOAK_SECONDS (default 600), then SOAK_IDLE_SECONDS
// (default 60) idle. Tally runs as `npm start` runs it (dist/main.js, embedded stores). Every 5 s it samples
// the process's RSS (/proc) and what /_metrics says of its parts (V8 heap, DuckDB's buffer manager,
// PGlite's memory, the queue backlog, the ingestion lag); it prints each minute's low and high points, the
// last minutes' low points against the middle ones' (a plateau or a climb), the idle RSS afterwards and
// whether every accepted event was stored, and the CPU the process used under the load. Not a test: it prints.
// SOAK_BATCH_RPS (default 30 requests/s = 3,000 events/s) and SOAK_DECIDE_RPS (default 300) set the rates;
// SOAK_SAMPLE_MS the sampling period, SOAK_TRACE=1 prints every sample, SOAK_NODE_ARGS adds Node flags to
// the server (e.g. --trace-gc), BENCH_SERVER_LOG=<file> keeps the server's output.
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { generateToken } from '../src/shared/ids.ts'
import { openDuckDb } from '../src/storage/duckdb/open-duckdb.ts'
import { MIGRATIONS } from '../src/app/create-adapters.ts'
import { gzipBatchBody } from './ingest-payloads.ts'
import { pacedLoad, type PacedRun } from './paced-load.ts'
import { cpuSeconds, readMetrics, rssMb, startServer, stopServer, TALLY_READY } from './server-process.ts'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600)
const IDLE_SECONDS = Number(process.env.SOAK_IDLE_SECONDS ?? 60)
const BATCH_RPS = Number(process.env.SOAK_BATCH_RPS ?? 30)
const DECIDE_RPS = Number(process.env.SOAK_DECIDE_RPS ?? 300)
const SAMPLE_MS = Number(process.env.SOAK_SAMPLE_MS ?? 5000)
const MB = 1024 * 1024

const main = path.resolve('dist/main.js')
if (!existsSync(main)) throw new Error('dist/main.js is missing: run `npm run build` (npm ci does) first')

const token = generateToken('phc_')
const personal = generateToken('phx_')
const auth = { authorization: `Bearer ${personal}` }
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-soak-'))
const nodeArgs = (process.env.SOAK_NODE_ARGS ?? '').split(' ').filter(Boolean)
const tally = await startServer([...nodeArgs, main, 'serve', '--port', '0', '--data-dir', dataDir], {
  env: { TALLY_PROJECT_API_KEY: token, TALLY_PERSONAL_API_KEY: personal, TALLY_LOG_LEVEL: 'info' },
  ready: TALLY_READY,
  log: true,
})
const url = tally.url
const api = async (p: string, init: RequestInit = {}) => {
  const res = await fetch(`${url}${p}`, { ...init, headers: { ...auth, 'content-type': 'application/json', ...init.headers } })
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${p} answered ${res.status}: ${await res.text()}`)
  return res.json() as Promise<any>
}
const projectId: number = (await api('/api/projects/')).results[0].id

// 50 flags as a product has them: rollouts, person-property conditions, a multivariate one in ten.
for (let i = 0; i < 50; i++) {
  const groups = i % 3 === 0
    ? [{ properties: [{ key: '$browser', operator: 'exact', value: ['Chrome', 'Safari'], type: 'person' }], rollout_percentage: 50 }]
    : [{ properties: [], rollout_percentage: (i * 7) % 100 }]
  const multivariate = i % 10 === 0 ? { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] } : null
  await api(`/api/projects/${projectId}/feature_flags/`, { method: 'POST', body: JSON.stringify({ key: `soak-flag-${i}`, filters: { groups, multivariate } }) })
}

/** The samples of /_metrics this benchmark follows, by series name and exact labels. */
function metrics() {
  return readMetrics(url, auth.authorization, {
    heapUsed: 'nodejs_heap_size_used_bytes',
    heapTotal: 'nodejs_heap_size_total_bytes',
    duckdb: 'tally_store_memory_bytes{store="duckdb"}',
    pglite: 'tally_store_memory_bytes{store="pglite"}',
    backlog: 'tally_queue_backlog_bytes',
    lag: 'tally_ingestion_lag_seconds',
  })
}

interface Sample { t: number; rss: number; heapUsed: number; heapTotal: number; duckdb: number; pglite: number; backlog: number; lag: number }
const samples: Sample[] = []
const t0 = performance.now()
async function sample(): Promise<void> {
  const m = await metrics()
  samples.push({
    t: (performance.now() - t0) / 1000,
    rss: rssMb(tally.pid).rss,
    heapUsed: m.heapUsed! / MB,
    heapTotal: m.heapTotal! / MB,
    duckdb: (m.duckdb ?? 0) / MB,
    pglite: (m.pglite ?? 0) / MB,
    backlog: m.backlog! / MB,
    lag: m.lag!,
  })
  const x = samples.at(-1)!
  if (process.env.SOAK_TRACE) console.log(`${x.t.toFixed(1)} s: RSS ${x.rss.toFixed(0)} MB, heap ${x.heapUsed.toFixed(0)}/${x.heapTotal.toFixed(0)}, DuckDB ${x.duckdb.toFixed(0)}, PGlite ${x.pglite.toFixed(0)}, backlog ${x.backlog.toFixed(1)} MB, lag ${x.lag} s`)
}
await sample()
const idleAtStart = samples[0]!
const sampler = setInterval(() => void sample().catch(() => undefined), SAMPLE_MS)

const batchBodies = Array.from({ length: 8 }, (_, i) => gzipBatchBody(token, 100, i))
let k = 0
const loadCpu0 = cpuSeconds(tally.pid)
const loadT0 = performance.now()
const [batch, decide] = await Promise.all([
  pacedLoad({
    url: `${url}/batch/`,
    rate: BATCH_RPS,
    seconds: SECONDS,
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: () => batchBodies[k++ % batchBodies.length]!,
    connections: 16,
  }),
  pacedLoad({
    url: `${url}/flags/?v=2`,
    rate: DECIDE_RPS,
    seconds: SECONDS,
    body: () => JSON.stringify({ token, distinct_id: `01903a5e-6c4b-7c3d-9a1e-${String(Math.floor(Math.random() * 6000)).padStart(12, '0')}`, groups: {} }),
    connections: 16,
  }),
])
const loadEnd = samples.length
const loadCpuMsPerSecond = ((cpuSeconds(tally.pid) - loadCpu0) / ((performance.now() - loadT0) / 1000)) * 1000
await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000))
clearInterval(sampler)
await sample()
const idle = samples.at(-1)!
const peak = rssMb(tally.pid).peak

await stopServer(tally)
const duck = await openDuckDb(path.join(dataDir, 'events', 'events.duckdb'), MIGRATIONS.duckdb)
const stored = Number((await duck.connection.runAndReadAll('SELECT count(*) AS n FROM events')).getRowObjects()[0]!.n)
await duck.close()
await rm(dataDir, { recursive: true, force: true })

const f = (n: number) => n.toFixed(0).padStart(5)
console.log(`\nTally soak: ${SECONDS}s of /batch/ at ${BATCH_RPS} req/s (${BATCH_RPS * 100} events/s) and /flags?v=2 at ${DECIDE_RPS} req/s, then ${IDLE_SECONDS}s idle; ${os.cpus().length} CPUs, Node ${process.version}\n`)
console.log('minute   RSS low  RSS high  heap used high  DuckDB high  PGlite  backlog MB high  lag s high')
const minutes = Math.ceil(SECONDS / 60)
const lows: number[] = []
for (let m = 0; m < minutes; m++) {
  const s = samples.slice(1, loadEnd).filter((x) => x.t >= m * 60 && x.t < (m + 1) * 60)
  if (s.length === 0) continue
  const max = (key: keyof Sample) => Math.max(...s.map((x) => x[key]))
  const low = Math.min(...s.map((x) => x.rss))
  lows.push(low)
  console.log(`${String(m + 1).padStart(6)}     ${f(low)}     ${f(max('rss'))}           ${f(max('heapUsed'))}        ${f(max('duckdb'))}   ${f(max('pglite'))}            ${f(max('backlog'))}      ${max('lag').toFixed(1).padStart(5)}`)
}
if (lows.length >= 3) {
  const third = Math.max(1, Math.floor(lows.length / 3))
  const mid = Math.min(...lows.slice(third, 2 * third))
  const last = Math.min(...lows.slice(-third))
  console.log(`\nRSS low point, middle third of the run: ${f(mid)} MB; last third: ${f(last)} MB (${last - mid >= 0 ? '+' : ''}${(last - mid).toFixed(0)} MB)`)
}
const accepted = batch.ok * 100
console.log(`RSS idle at start ${f(idleAtStart.rss)} MB; idle after the load ${f(idle.rss)} MB (heap ${idle.heapUsed.toFixed(0)}/${idle.heapTotal.toFixed(0)} MB, DuckDB ${idle.duckdb.toFixed(0)} MB, PGlite ${idle.pglite.toFixed(0)} MB); peak ${f(peak)} MB`)
const statuses = (r: PacedRun) => Object.entries(r.statuses).map(([code, count]) => `${code}: ${count}`).join(', ')
console.log(`/batch/: ${batch.ok} answered 2xx (${statuses(batch)}), ${batch.errors} errors, p50 ${batch.p50} ms, p99 ${batch.p99} ms, max ${batch.max} ms`)
console.log(`/flags: ${decide.ok} answered 2xx (${statuses(decide)}), ${decide.errors} errors, p50 ${decide.p50} ms, p99 ${decide.p99} ms, max ${decide.max} ms`)
console.log(`Tally CPU under the load: ${loadCpuMsPerSecond.toFixed(0)} ms per second (all threads; /batch/ and /flags together)`)
console.log(`events stored vs accepted: ${stored} / ${accepted}${stored >= accepted ? ' (none lost)' : ' (LOST EVENTS)'}`)
