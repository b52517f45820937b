// npm run bench:actions — GET /api/projects/:id/actions/:id/count and /actions/people over 10
// million events (BENCH_EVENTS), loaded straight into a fresh data dir's DuckDB (bench/actions-data.ts)
// and 300,000 persons in its PGlite, with actions created through the API. Each figure is the median
// of BENCH_RUNS (default 5) requests after one discarded warm-up, with the server's CPU time (all
// threads, DuckDB's included) per request. The floor is the same count written by hand for this data
// and run in DuckDB directly in this process (no HTTP, no generic compilation): the ratio says what
// Tally's general SQL costs over it. Not a test: it prints. BENCH_PROFILE=dir writes a CPU profile
// of the server; BENCH_KEEP=1 keeps the data dir (its path is printed).
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { generateToken } from '../src/shared/ids.ts'
import { openDuckDb } from '../src/storage/duckdb/open-duckdb.ts'
import { openPgliteSqlClient } from '../src/storage/pglite/pglite-sql-client.ts'
import { MIGRATIONS } from '../src/app/create-adapters.ts'
import { cpuSeconds, startServer, tallyMain, stopServer, TALLY_READY, type ServerProcess } from './server-process.ts'
import { loadEvents, loadPersons, type DataSet } from './actions-data.ts'

const SET: DataSet = { events: Number(process.env.BENCH_EVENTS ?? 10_000_000), persons: 300_000, days: 30 }
const RUNS = Number(process.env.BENCH_RUNS ?? 5)

const URL_REGEX = '^https://shop\\.example\\.com/products/[0-9]+$'
/** The floor reads the materialized column too (what the event store writes for a string `$current_url`). */
const CURRENT_URL = 'mat_current_url'
/** The actions, each with its hand-written DuckDB condition for this data (the floor). */
const ACTIONS = [
  { name: 'event name: signed up', steps: [{ event: 'signed up' }], floor: `event = 'signed up'` },
  {
    name: 'url contains /pricing',
    steps: [{ event: '$pageview', url: '/pricing', url_matching: 'contains' }],
    floor: `event = '$pageview' AND contains(${CURRENT_URL}, '/pricing')`,
  },
  {
    name: 'url regex products/[0-9]+',
    steps: [{ event: '$pageview', url: URL_REGEX, url_matching: 'regex' }],
    floor: `event = '$pageview' AND regexp_matches(${CURRENT_URL}, '${URL_REGEX}')`,
  },
  {
    name: 'selector div.shop > button.primary',
    steps: [{ event: '$autocapture', selector: 'div.shop > button.primary' }],
    floor: `event = '$autocapture' AND starts_with(elements_chain, 'button.btn.primary:') AND contains(elements_chain, ';div.shop:')`,
  },
  {
    name: 'text "Buy now" on autocapture',
    steps: [{ event: '$autocapture', text: 'Buy now' }],
    floor: `event = '$autocapture' AND contains(elements_chain, 'text="Buy now"')`,
  },
  {
    name: '3 steps: purchase | /checkout | selector',
    steps: [{ event: 'purchase' }, { event: '$pageview', url: '/checkout', url_matching: 'contains' }, { event: '$autocapture', selector: 'div.shop > button.primary' }],
    floor: `event = 'purchase' OR (event = '$pageview' AND contains(${CURRENT_URL}, '/checkout'))
      OR (event = '$autocapture' AND starts_with(elements_chain, 'button.btn.primary:') AND contains(elements_chain, ';div.shop:'))`,
  },
]

function start(dataDir: string, env: Record<string, string>): Promise<ServerProcess> {
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []
  const args = [...profile, tallyMain(), 'serve', '--port', '0', '--data-dir', dataDir]
  return startServer(args, { env: { ...env, TALLY_LOG_LEVEL: 'info' }, ready: TALLY_READY })
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

interface Timing {
  medianMs: number
  minMs: number
  maxMs: number
  cpuMs: number
  value: unknown
}

/** One discarded warm-up, then RUNS timed calls; CPU per call from `cpu` (seconds used so far). */
async function time(call: () => Promise<unknown>, cpu: () => number): Promise<Timing> {
  let value = await call()
  const walls: number[] = []
  const cpu0 = cpu()
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    value = await call()
    walls.push(performance.now() - t0)
  }
  return { medianMs: median(walls), minMs: Math.min(...walls), maxMs: Math.max(...walls), cpuMs: ((cpu() - cpu0) * 1000) / RUNS, value }
}

async function main() {
  const token = generateToken('phc_')
  const personal = generateToken('phx_')
  const headers = { authorization: `Bearer ${personal}`, 'content-type': 'application/json' }
  const env = { TALLY_PROJECT_API_KEY: token, TALLY_PERSONAL_API_KEY: personal }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-bench-actions-'))

  // First start makes the project; the stores are then filled while Tally is stopped (one owner per file).
  let tally = await start(dataDir, env)
  const projects = (await (await fetch(`${tally.url}/api/projects/`, { headers })).json()) as { results: Array<{ id: number }> }
  const projectId = projects.results[0]!.id
  await stopServer(tally)

  const t0 = performance.now()
  const duck = await openDuckDb(path.join(dataDir, 'events', 'events.duckdb'), MIGRATIONS.duckdb)
  await loadEvents(duck.connection, projectId, SET, new Date())
  await duck.close()
  const eventsSec = (performance.now() - t0) / 1000
  const t1 = performance.now()
  const meta = await openPgliteSqlClient(path.join(dataDir, 'metadata'))
  await loadPersons(meta, projectId, SET)
  await meta.close()
  const personsSec = (performance.now() - t1) / 1000

  tally = await start(dataDir, env)
  const pid = tally.pid
  const api = `${tally.url}/api/projects/${projectId}`
  const get = async (url: string) => {
    const res = await fetch(url, { headers })
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${await res.text()}`)
    return res.json() as Promise<Record<string, unknown>>
  }
  const results: Array<{ name: string; count: Timing; people: Timing; floor?: Timing }> = []
  for (const action of ACTIONS) {
    const res = await fetch(`${api}/actions/`, { method: 'POST', headers, body: JSON.stringify({ name: action.name, steps: action.steps }) })
    if (res.status !== 201) throw new Error(`creating ${action.name} answered ${res.status}: ${await res.text()}`)
    const id = ((await res.json()) as { id: number }).id
    const count = await time(async () => (await get(`${api}/actions/${id}/count/`)).count, () => cpuSeconds(pid))
    const people = await time(async () => {
      const body = (await get(`${api}/actions/people/?action_id=${id}&date_from=all`)) as { results: Array<{ count: number }>; missing_persons: number }
      return `${body.results[0]!.count} on the first page, ${body.missing_persons} missing`
    }, () => cpuSeconds(pid))
    results.push({ name: action.name, count, people })
  }
  await stopServer(tally)

  const direct = await openDuckDb(path.join(dataDir, 'events', 'events.duckdb'), MIGRATIONS.duckdb)
  const after = new Date()
  after.setUTCMonth(after.getUTCMonth() - 3)
  const cpuSelf = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1e6
  }
  for (const [i, action] of ACTIONS.entries()) {
    const sql = `SELECT count(*) AS n FROM events WHERE project_id = ${projectId} AND timestamp >= '${after.toISOString()}'::TIMESTAMPTZ AND (${action.floor})`
    results[i]!.floor = await time(async () => Number((await direct.connection.runAndReadAll(sql)).getRowObjects()[0]!.n), cpuSelf)
  }
  await direct.close()
  if (process.env.BENCH_KEEP) console.log(`data dir kept: ${dataDir}`)
  else await rm(dataDir, { recursive: true, force: true })

  const row = (name: string, v: string) => console.log(`${name.padEnd(44)} ${v}`)
  const ms = (x: number) => `${x.toFixed(0)} ms`
  console.log(`\nTally actions benchmark: ${SET.events.toLocaleString('en')} events, ${SET.persons.toLocaleString('en')} persons over ${SET.days} days,`)
  console.log(`median of ${RUNS} runs after a warm-up, ${os.cpus().length} CPUs, Node ${process.version}; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`)
  console.log(`loaded in ${eventsSec.toFixed(0)} s (events, DuckDB) + ${personsSec.toFixed(0)} s (persons, PGlite)\n`)
  for (const r of results) {
    const f = r.floor!
    const agree = f.value === r.count.value ? '' : `  COUNTS DIFFER: floor ${String(f.value)}`
    row(`/count ${r.name}`, `${ms(r.count.medianMs)} (${ms(r.count.minMs)}-${ms(r.count.maxMs)}), ${ms(r.count.cpuMs)} CPU; count ${Number(r.count.value).toLocaleString('en')}${agree}`)
    row('  hand-written SQL in DuckDB (floor)', `${ms(f.medianMs)}, ${ms(f.cpuMs)} CPU; Tally = ${(r.count.medianMs / f.medianMs).toFixed(1)}x the floor`)
    row('  /actions/people date_from=all', `${ms(r.people.medianMs)} (${ms(r.people.minMs)}-${ms(r.people.maxMs)}), ${ms(r.people.cpuMs)} CPU; ${String(r.people.value)}`)
  }
  const cpuPerM = results.map((r) => (1e6 * r.count.cpuMs) / SET.events)
  row('/count CPU per 1,000 events scanned', `${(Math.min(...cpuPerM) / 1000).toFixed(3)}-${(Math.max(...cpuPerM) / 1000).toFixed(3)} ms`)
}

await main()
