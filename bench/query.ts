// npm run bench:query — the query API's kinds over 10M events of 300k persons in 30 days, generated
// with SQL range() straight into a fresh DuckDB file (bench/query-data.ts; not through capture). Not a test: it prints
// wall and CPU time of each query (best and median of BENCH_RUNS runs after one warm-up), computed
// through the same query service the HTTP route uses. BENCH_EVENTS / BENCH_PERSONS scale the data;
// BENCH_REUSE=<file.duckdb> times an existing file (made by a previous run with BENCH_KEEP=1) instead.
// The same rows are generated again in a ClickHouse server of the bench's own (bench/query-clickhouse.ts)
// and every query runs there too, printed side by side, with the server's own CPU apart from Node's, and
// whether the two answers are the same (the bench exits with 1, printing both, when they are not);
// BENCH_CLICKHOUSE=0 skips it; BENCH_ONLY=<text> times only the queries whose name contains it. A query an
// engine refuses (400) prints the refusal.
// BENCH_SESSION_BATCH_MS=<ms>: DuckDB's sessions aggregate holds one partial per session per <ms> of event
// time (as ingestion in micro-batches of that length writes it when events arrive as they happen) rather
// than one per session; the queries are timed on those partials, then again after the compaction
// (duckdb-session-compaction.ts) has merged them, with the partials' counts and the compaction's cost.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { MIGRATIONS } from '../src/app/create-adapters.ts'
import { QUERY_KINDS } from '../src/modules/query/query-kinds.ts'
import { createQueryService } from '../src/modules/query/query-service.ts'
import type { Project } from '../src/modules/projects/project-types.ts'
import { openDuckDb } from '../src/storage/duckdb/open-duckdb.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { fillMaterializedSql } from '../src/storage/duckdb/materialized-properties.ts'
import { FILL_SESSIONS_SQL } from '../src/storage/duckdb/duckdb-sessions.ts'
import { createDuckDbSessionCompaction } from '../src/storage/duckdb/duckdb-session-compaction.ts'
import { createDuckDbQueryEngine } from '../src/storage/duckdb/duckdb-query-engine.ts'
import type { QueryEngine } from '../src/modules/query/query-engine.ts'
import { AppError } from '../src/shared/errors.ts'
import { loadClickHouse, type BenchClickHouse } from './query-clickhouse.ts'
import { duckDbGenerateSql } from './query-data.ts'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000)
const PERSONS = Number(process.env.BENCH_PERSONS ?? 300_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const DAYS = 30
const SESSION_BATCH_MS = Number(process.env.BENCH_SESSION_BATCH_MS ?? 0)

const dateRange = { date_from: '2024-06-01', date_to: '2024-06-30' }
const webRange = { date_from: '2024-06-24', date_to: '2024-06-30' }
const trends = (series: object, extra: object = {}) => ({ kind: 'TrendsQuery', interval: 'day', dateRange, series: [series], ...extra })

/** The queries timed, by name; other kinds (funnels, retention, HogQL) add theirs here. */
export const BENCH_QUERIES: Record<string, { query: object; target: number }> = {
  '30-day daily trend (count of $pageview)': { query: trends({ kind: 'EventsNode', event: '$pageview' }), target: 0.3 },
  'DAU (30 days)': { query: trends({ kind: 'EventsNode', event: '$pageview', math: 'dau' }), target: 1 },
  'WAU (30 days)': { query: trends({ kind: 'EventsNode', event: '$pageview', math: 'weekly_active' }), target: 1 },
  'breakdown by a 50-value property': { query: trends({ kind: 'EventsNode', event: '$pageview' }, { breakdownFilter: { breakdown: '$browser', breakdown_limit: 25 } }), target: 0.3 },
  '3-step funnel ($pageview, signup, purchase; 14-day window)': {
    query: { kind: 'FunnelsQuery', dateRange, series: ['$pageview', 'signup', 'purchase'].map((event) => ({ kind: 'EventsNode', event })), funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' } },
    target: 1,
  },
  '7-interval daily retention (signup, then $pageview; 30 cohorts)': {
    query: { kind: 'RetentionQuery', dateRange, retentionFilter: { period: 'Day', totalIntervals: 7, targetEntity: { id: 'signup', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } } },
    target: 1,
  },
  'HogQL count grouped by event': { query: { kind: 'HogQLQuery', query: 'SELECT event, count() FROM events GROUP BY event ORDER BY count() DESC' }, target: 0.3 },
  '5-step paths of $pageview (30 days)': { query: { kind: 'PathsQuery', dateRange, pathsFilter: { includeEventTypes: ['$pageview'], stepLimit: 5 } }, target: 1 },
  // Web analytics (docs/web-analytics.md): the last 7 days' page views with their sessions from the sessions aggregate.
  'web overview (7 days, compare)': { query: { kind: 'WebOverviewQuery', dateRange: webRange, properties: [], compareFilter: { compare: true } }, target: 1 },
  'web pages table (7 days, bounce rate)': { query: { kind: 'WebStatsTableQuery', breakdownBy: 'Page', dateRange: webRange, properties: [], includeBounceRate: true, limit: 10 }, target: 1 },
  'web channel table (7 days)': { query: { kind: 'WebStatsTableQuery', breakdownBy: 'InitialChannelType', dateRange: webRange, properties: [], limit: 10 }, target: 1 },
}

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-bench-query-'))
  try {
    const reuse = process.env.BENCH_REUSE
    const shape = { events: EVENTS, persons: PERSONS, days: DAYS }
    const duck = await openDuckDb(reuse ?? path.join(dir, 'events.duckdb'), MIGRATIONS.duckdb)
    const t0 = performance.now()
    if (!reuse) {
      await duck.connection.run(duckDbGenerateSql(shape))
      // As the event store would have: the materialized property columns, and the sessions aggregate
      // (as migration 0011's backfill fills it; ClickHouse's view fills its own as the rows go in).
      await duck.connection.run(fillMaterializedSql())
      if (SESSION_BATCH_MS > 0) {
        // The macro's partials per (session, batch): the batch rides in the session id, then is cut off.
        await duck.connection.run(`CREATE TEMP VIEW bench_batched AS SELECT * REPLACE (mat_session_id || chr(1) || (epoch_ms(timestamp) // ${SESSION_BATCH_MS}) AS mat_session_id) FROM events`)
        await duck.connection.run(`INSERT INTO sessions SELECT * REPLACE (split_part(session_id, chr(1), 1) AS session_id) FROM session_partials('bench_batched')`)
        await duck.connection.run('DROP VIEW bench_batched')
      } else await duck.connection.run(FILL_SESSIONS_SQL)
      await duck.connection.run('CHECKPOINT')
      console.log(`loaded ${EVENTS.toLocaleString()} events of ${PERSONS.toLocaleString()} persons over ${DAYS} days in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
      if (process.env.BENCH_KEEP) console.log(`kept in ${path.join(dir, 'events.duckdb')}`)
    }
    // The queries run under the memory limit Tally gives DuckDB (TALLY_DUCKDB_MEMORY_LIMIT); the load above did not.
    const memoryLimit = loadConfig({}, process.env).storage.duckdbMemoryLimit
    await duck.connection.run(`SET memory_limit = '${memoryLimit}'`)
    console.log(`DuckDB memory_limit ${memoryLimit}`)
    const project = { id: 1, timezone: 'UTC', testAccountFilters: [], pathCleaningFilters: [] } as unknown as Project
    const serviceOf = (engine: QueryEngine) => createQueryService({
      engine,
      lookups: { action: async () => null, cohort: async () => null, groupValues: async () => [], persons: async () => [], groups: async () => [] },
      limits: { concurrency: 1, perProject: 1, perUser: 1, ratePerUser: 0, timeoutMs: 600_000, maxRows: 1_000_000 },
      kinds: QUERY_KINDS,
    })
    const duckQueries = serviceOf(createDuckDbQueryEngine(() => duck.connect(), { poolSize: 1 }))
    let clickhouse: BenchClickHouse | null = null
    if (process.env.BENCH_CLICKHOUSE !== '0') clickhouse = await loadClickHouse(duck.connection, shape, path.join(dir, 'clickhouse'), loadConfig({}, process.env).query.threads)
    const chQueries = clickhouse ? serviceOf(clickhouse.engine) : null
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    /** Median wall, Node CPU and server CPU (ClickHouse's process) of RUNS runs after a warm-up, and the answer; the refusal's text when refused. */
    async function time(queries: ReturnType<typeof serviceOf>, query: object, serverCpu?: () => number): Promise<{ cells: string[]; answer?: string }> {
      let answer: string
      try {
        answer = comparable((await queries.run(project, query)).results)
      } catch (err) {
        if (err instanceof AppError) return { cells: [`refused: ${err.message.slice(0, 60)}`, '', ''] }
        throw err
      }
      const walls: number[] = []
      const cpus: number[] = []
      const servers: number[] = []
      for (let r = 0; r < RUNS; r++) {
        const cpu = process.cpuUsage()
        const server = serverCpu?.() ?? 0
        const t0 = performance.now()
        await queries.run(project, query)
        walls.push((performance.now() - t0) / 1000)
        const used = process.cpuUsage(cpu)
        cpus.push((used.user + used.system) / 1e6)
        servers.push((serverCpu?.() ?? 0) - server)
      }
      return { cells: [median(walls).toFixed(3), median(cpus).toFixed(3), serverCpu ? median(servers).toFixed(2) : ''], answer }
    }
    const differing: string[] = []
    const answers = new Map<string, string | undefined>()
    const table = async () => {
      console.log(`\n| query | DuckDB wall median (s) | DuckDB CPU (s) | ClickHouse wall median (s) | Node CPU (s) | ClickHouse server CPU (s) | same answer | target (s) |\n|---|---|---|---|---|---|---|---|`)
      for (const [name, { query, target }] of Object.entries(BENCH_QUERIES)) {
        if (process.env.BENCH_ONLY && !name.includes(process.env.BENCH_ONLY)) continue
        const duckRun = await time(duckQueries, query)
        const chRun = chQueries ? await time(chQueries, query, clickhouse!.serverCpu) : { cells: ['not run', '', ''] }
        const same = duckRun.answer === undefined || chRun.answer === undefined ? '' : duckRun.answer === chRun.answer ? 'yes' : 'NO'
        if (same === 'NO') differing.push(`${name}:\n  DuckDB     ${duckRun.answer!.slice(0, 2000)}\n  ClickHouse ${chRun.answer!.slice(0, 2000)}`)
        // After the compaction: DuckDB must answer as it did on the partials.
        if (answers.has(name) && answers.get(name) !== duckRun.answer) differing.push(`${name}: DuckDB's answer changed with the compaction`)
        answers.set(name, duckRun.answer)
        console.log(`| ${name} | ${duckRun.cells[0]} | ${duckRun.cells[1]} | ${chRun.cells.join(' | ')} | ${same} | ${target} |`)
      }
    }
    const partials = async () => Number((await duck.connection.runAndReadAll('SELECT count(*)::DOUBLE FROM sessions')).getColumnsJS()[0]![0])
    if (SESSION_BATCH_MS > 0) console.log(`\nsessions aggregate: ${(await partials()).toLocaleString()} partials (one per session and ${SESSION_BATCH_MS} ms batch)`)
    await table()
    if (SESSION_BATCH_MS > 0) {
      const compaction = createDuckDbSessionCompaction(await duck.connect())
      const cpu = process.cpuUsage()
      const t0 = performance.now()
      let steps = 0
      while ((await compaction.compactStep(20_000)).more) steps++
      const used = process.cpuUsage(cpu)
      console.log(`\ncompaction: ${steps + 1} steps of at most 20,000 sessions, ${((performance.now() - t0) / 1000).toFixed(1)} s wall, ${((used.user + used.system) / 1e6).toFixed(1)} s CPU; ${(await partials()).toLocaleString()} partials left`)
      await table()
    }
    // Both engines hold the same rows (bench/query-data.ts): their answers must agree.
    if (differing.length) {
      console.error(`\nThe engines' answers differ:\n${differing.join('\n')}`)
      process.exitCode = 1
    }
    await clickhouse?.close()
    await duck.close()
  } finally {
    if (!process.env.BENCH_KEEP) await rm(dir, { recursive: true, force: true })
  }
}

/** An answer as text to compare across engines: fractions to 9 significant digits (averages summed in another order). */
function comparable(results: unknown): string {
  return JSON.stringify(results, (_, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(9)) : v))
}

// Run as the script (other scripts import BENCH_QUERIES).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main()
