// `npm run bench:decide`: /flags?v=2 throughput of Tally (embedded stores, 50 active flags, 100,000
// persons) against a bare Fastify route in the same run, p99 at a fixed 1,000 req/s, RSS, and the
// flag engine alone. Servers run in child processes so autocannon does not share their event loop
// (on a small machine they still share cores: CPU time per request is the steadier figure).
// Tally runs twice on the same data: restarted without the person-cache warm-up (cold: first pass),
// then restarted with it (warm). Then the paced 1,000 req/s again while four heavy insight queries
// (cartesian joins) compute, and the targets of issue 29 as ratios to the bare route's p99 measured
// in the same run, with CPU per request (the event loop's own, and the whole process's).
// BENCH_SECONDS (or the first argument) sets each phase's length (default 10); BENCH_PROFILE=dir
// writes a CPU profile of the Tally process, BENCH_NODE_ARGS adds node flags to it; BENCH_PHASE_PROFILE=dir
// writes one V8 CPU profile of the Tally process per paced phase (steady, known, beside).
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { pacedLoad, type PacedRun } from './paced-load.ts'
import { benchNodeArgs } from './server-process.ts'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const DURATION = Number(process.argv[2] ?? process.env.BENCH_SECONDS ?? 10)

type Child = { child: ChildProcess; port: number; token: string }

async function start(mode: 'tally' | 'ceiling'): Promise<Child> {
  const profile = mode === 'tally' ? benchNodeArgs() : []
  const child = fork(path.join(HERE, 'decide-server.ts'), [mode], { execArgv: ['--import', 'tsx', ...profile], stdio: 'inherit' })
  const [msg] = (await once(child, 'message')) as [{ port: number; token: string }]
  return { child, port: msg.port, token: msg.token }
}

interface Stats {
  cpuMicros: number
  /** The main thread's alone (DuckDB's query threads excluded). */
  mainCpuMicros: number
  rss: number
  cache: { hits: number; misses: number; warmed: number; entries: number } | null
}

async function stats(child: ChildProcess): Promise<Stats> {
  child.send({ type: 'stats' })
  const [msg] = (await once(child, 'message')) as [Stats]
  return msg
}

async function restart(server: Child, warm: boolean): Promise<{ entries: number; ms: number } | null> {
  server.child.send({ type: 'restart', warm })
  const [msg] = (await once(server.child, 'message')) as [{ port: number; warmUp: { entries: number; ms: number } | null }]
  server.port = msg.port
  return msg.warmUp
}

/**
 * A posthog-js 1.4xx `/flags/?v=2` body for a random person: one in ten unknown to the server, or
 * with `knownOnly` one of the 100,000 seeded persons.
 */
function body(token: string, knownOnly = false): string {
  const n = Math.floor(Math.random() * (knownOnly ? 100_000 : 110_000))
  return JSON.stringify({
    token,
    distinct_id: `person-${n}`,
    groups: {},
    person_properties: { $initial_referring_domain: '$direct', $initial_current_url: 'https://app.example.com/', $lib: 'web', $lib_version: '1.449.2' },
    group_properties: {},
    timezone: 'Europe/Berlin',
    $device_id: `01936f0c-${n.toString(16).padStart(4, '0')}-7000-8000-000000000000`,
  })
}

interface Run {
  rps: number
  p50: number
  p99: number
  /** Server CPU time (user + system) per answered request. */
  cpuMicros: number
  /** Person-cache hit ratio of the run (Tally only). */
  hitRatio: number | null
}

async function load(server: Child, opts: { connections: number; overallRate?: number }): Promise<Run> {
  const before = await stats(server.child)
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}/flags/?v=2`,
    method: 'POST',
    connections: opts.connections,
    overallRate: opts.overallRate,
    duration: DURATION,
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: body(server.token) }) }],
  })
  const after = await stats(server.child)
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`)
  const hits = after.cache && before.cache ? after.cache.hits - before.cache.hits : 0
  const misses = after.cache && before.cache ? after.cache.misses - before.cache.misses : 0
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMicros: (after.cpuMicros - before.cpuMicros) / Math.max(1, result['2xx']),
    hitRatio: after.cache ? hits / Math.max(1, hits + misses) : null,
  }
}

type Paced = PacedRun & { cpuMicros: number; mainCpuMicros: number }

/** Starts (no file) or stops and writes (file) a CPU profile of the phase in the child. */
async function profile(server: Child, file?: string): Promise<void> {
  server.child.send({ type: 'profile', file })
  await once(server.child, 'message')
}

/** A steady 1,000 req/s (one request a millisecond, latency from when each was due), with CPU per request. */
async function paced(server: Child, knownOnly = false, phase?: string): Promise<Paced> {
  const profileDir = phase === undefined ? undefined : process.env.BENCH_PHASE_PROFILE
  if (profileDir) await profile(server)
  const before = await stats(server.child)
  const run = await pacedLoad({ url: `http://127.0.0.1:${server.port}/flags/?v=2`, rate: 1000, seconds: DURATION, body: () => body(server.token, knownOnly) })
  const after = await stats(server.child)
  if (profileDir) await profile(server, path.join(profileDir, `${phase}.cpuprofile`))
  if (run.failed > 0) throw new Error(`${run.failed} failed requests at a steady 1,000 req/s`)
  const per = (a: number, b: number) => (a - b) / Math.max(1, run.answered)
  return { ...run, cpuMicros: per(after.cpuMicros, before.cpuMicros), mainCpuMicros: per(after.mainCpuMicros, before.mainCpuMicros) }
}
const fmtPaced = (r: Paced) =>
  `${Math.round(r.rps).toLocaleString('en')} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms, ` +
  `${Math.round(r.cpuMicros)} µs CPU/request (event loop ${Math.round(r.mainCpuMicros)})`

/** Starts (resolving once all four compute) or cancels the heavy queries in the Tally process. */
async function heavy(server: Child, on: boolean): Promise<void> {
  server.child.send({ type: 'heavy', on })
  await once(server.child, 'message')
}

const fmt = (r: Run) =>
  `${Math.round(r.rps).toLocaleString('en')} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${Math.round(r.cpuMicros)} µs CPU/request` +
  (r.hitRatio === null ? '' : `, person cache hits ${(100 * r.hitRatio).toFixed(1)} %`)
const share = (r: Run) => `  = ${((100 * r.rps) / ceil.rps).toFixed(0)} % of the ceiling`

const ceiling = await start('ceiling')
await load(ceiling, { connections: 50 }) // warm-up run, discarded
const ceil = await load(ceiling, { connections: 50 })
const ceilPaced = await paced(ceiling)
ceiling.child.send({ type: 'stop' })
console.log(`ceiling (bare Fastify route):      ${fmt(ceil)}`)
console.log(`ceiling at a steady 1,000 req/s:   ${fmtPaced(ceilPaced)}`)

const tally = await start('tally') // restarted on the seeded data, person cache empty and not warmed
const cold = await load(tally, { connections: 50 })
console.log(`tally /flags?v=2 cold, first pass: ${fmt(cold)}${share(cold)}`)
const warmUp = await restart(tally, true)
console.log(`tally restarted, person cache warm-up: ${warmUp?.entries.toLocaleString('en')} persons in ${warmUp?.ms} ms`)
await load(tally, { connections: 50 }) // JIT warm-up run, discarded
const max = await load(tally, { connections: 50 })
const steady = await paced(tally, false, 'steady')
const steadyKnown = await paced(tally, true, 'known')
await heavy(tally, true)
const beside = await paced(tally, false, 'beside')
await heavy(tally, false)
const bursts = await load(tally, { connections: 20, overallRate: 1000 })
const memory = await stats(tally.child)
tally.child.send({ type: 'stop' })
console.log(`tally /flags?v=2 warm, saturated:  ${fmt(max)}${share(max)}`)
console.log(`tally /flags?v=2 at a steady 1,000 req/s: ${fmtPaced(steady)}`)
console.log(`  the same, seeded (cached) persons only:  ${fmtPaced(steadyKnown)}`)
console.log(`tally /flags?v=2, autocannon overallRate 1,000 (20 connections, each sending its 50 a second back to back): ${fmt(bursts)}`)
console.log(`tally /flags?v=2 at a steady 1,000 req/s beside four heavy insight queries: ${fmtPaced(beside)}`)
const ratio = (r: Paced) => `${(r.p99 / ceilPaced.p99).toFixed(2)}x the bare route's p99 (${r.p99} / ${ceilPaced.p99} ms)`
console.log('issue 29 targets (ratios to the bare route in this run; CPU of the event loop per request):')
console.log(`  CPU per /decide, 50 flags, warm, 1,000 req/s <= 150 µs: ${Math.round(steady.mainCpuMicros)} µs (process ${Math.round(steady.cpuMicros)} µs); cached persons ${Math.round(steadyKnown.mainCpuMicros)} µs`)
console.log(`  p99 at 1,000 req/s <= 3x the bare route's: ${ratio(steady)}`)
console.log(`  p99 beside four heavy queries <= 3x the bare route's: ${ratio(beside)}`)
console.log(`tally RSS after the runs:          ${(memory.rss / 1024 / 1024).toFixed(0)} MB (${memory.cache?.entries.toLocaleString('en')} cache entries)`)
console.log('flag engine alone (bench/flag-engine.ts):')
await import('./flag-engine.ts')
