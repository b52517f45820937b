// npm run bench:query — the query API's kinds over 10M events of 300k persons in 30 days, generated
// with SQL range() straight into a fresh DuckDB file (not through capture). Not a test: it prints
// wall and CPU time of each query (best and median of BENCH_RUNS runs after one warm-up), computed
// through the same query service the HTTP route uses. BENCH_EVENTS / BENCH_PERSONS scale the data;
// BENCH_REUSE=<file.duckdb> times an existing file (made by a previous run with BENCH_KEEP=1) instead;
// BENCH_ONLY=<text> times only the queries whose name contains it. BENCH_ENGINE=clickhouse with
// BENCH_CLICKHOUSE_URL times the same kinds on ClickHouse (query-clickhouse-data.ts).
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { MIGRATIONS } from '../src/app/create-adapters.ts'
import { QUERY_KINDS } from '../src/modules/query/query-kinds.ts'
import { createQueryService } from '../src/modules/query/query-service.ts'
import type { Project } from '../src/modules/projects/project-types.ts'
import { openDuckDb } from '../src/storage/duckdb/open-duckdb.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { fillMaterializedSql } from '../src/storage/duckdb/materialized-properties.ts'
import { createDuckDbQueryEngine } from '../src/storage/duckdb/duckdb-query-engine.ts'
import { openClickHouseBench } from './query-clickhouse-data.ts'
import type { QueryEngine } from '../src/modules/query/query-engine.ts'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000)
const PERSONS = Number(process.env.BENCH_PERSONS ?? 300_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
/** BENCH_ONLY=<text>: time only the queries whose name contains it. */
const ONLY = process.env.BENCH_ONLY
const DAYS = 30

/** Events of one project: 60% $pageview, 25% signup, 15% purchase; 50 browsers; persons evenly over the month. */
const GENERATE = `
INSERT INTO events (uuid, project_id, event, distinct_id, properties, elements_chain, timestamp, created_at, person_id, person_properties)
SELECT
  uuid(), 1,
  CASE WHEN i % 20 < 12 THEN '$pageview' WHEN i % 20 < 17 THEN 'signup' ELSE 'purchase' END,
  'user-' || p,
  json_object('$browser', 'browser-' || (hash(i) % 50), '$current_url', 'https://example.com/' || (i % 200), 'amount', i % 100),
  '',
  TIMESTAMPTZ '2024-06-01 00:00:00+00' + to_seconds(CAST(i * ${DAYS * 86_400} // ${EVENTS} AS BIGINT)),
  TIMESTAMPTZ '2024-06-01 00:00:00+00',
  CAST(md5('person-' || p) AS UUID),
  json_object('plan', CASE WHEN p % 5 = 0 THEN 'pro' ELSE 'free' END)
FROM (SELECT i, hash(i * 7919) % ${PERSONS} AS p FROM range(${EVENTS}) t(i))`

const dateRange = { date_from: '2024-06-01', date_to: '2024-06-30' }
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
  '5-step paths of $pageview (30 days)': { query: { kind: 'PathsQuery', dateRange, pathsFilter: { includeEventTypes: ['$pageview'], stepLimit: 5 } }, target: 1 },
  'HogQL count grouped by event': { query: { kind: 'HogQLQuery', query: 'SELECT event, count() FROM events GROUP BY event ORDER BY count() DESC' }, target: 0.3 },
}

/** The DuckDB file the queries read: generated here, or BENCH_REUSE's. */
async function openDuckDbBench(dir: string): Promise<{ engine: QueryEngine; close(): Promise<void> }> {
  const reuse = process.env.BENCH_REUSE
  const duck = await openDuckDb(reuse ?? path.join(dir, 'events.duckdb'), MIGRATIONS.duckdb)
  const t0 = performance.now()
  if (!reuse) {
    await duck.connection.run(GENERATE)
    // As the event store would have: the materialized property columns.
    await duck.connection.run(fillMaterializedSql())
    await duck.connection.run('CHECKPOINT')
    console.log(`loaded ${EVENTS.toLocaleString()} events of ${PERSONS.toLocaleString()} persons over ${DAYS} days in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    if (process.env.BENCH_KEEP) console.log(`kept in ${path.join(dir, 'events.duckdb')}`)
  }
  // The queries run under the memory limit Tally gives DuckDB (TALLY_DUCKDB_MEMORY_LIMIT); the load above did not.
  const memoryLimit = loadConfig({}, process.env).storage.duckdbMemoryLimit
  await duck.connection.run(`SET memory_limit = '${memoryLimit}'`)
  console.log(`DuckDB memory_limit ${memoryLimit}`)
  return { engine: createDuckDbQueryEngine(() => duck.connect(), { poolSize: 1 }), close: () => duck.close() }
}

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-bench-query-'))
  try {
    const onClickHouse = process.env.BENCH_ENGINE === 'clickhouse'
    if (onClickHouse && !process.env.BENCH_CLICKHOUSE_URL) throw new Error('BENCH_ENGINE=clickhouse needs BENCH_CLICKHOUSE_URL (e.g. http://127.0.0.1:8123)')
    const { engine, close } = onClickHouse ? await openClickHouseBench(process.env.BENCH_CLICKHOUSE_URL!, EVENTS, PERSONS, DAYS) : await openDuckDbBench(dir)
    const project = { id: 1, timezone: 'UTC' } as Project
    const queries = createQueryService({
      engine,
      lookups: { action: async () => null, cohort: async () => null, groupValues: async () => [], persons: async () => [], groups: async () => [] },
      limits: { concurrency: 1, perProject: 1, perUser: 1, ratePerUser: 0, timeoutMs: 600_000, maxRows: 1_000_000 },
      kinds: QUERY_KINDS,
    })
    console.log(`\n${onClickHouse ? 'ClickHouse' : 'DuckDB'}\n| query | wall best (s) | wall median (s) | CPU median (s) | target (s) |\n|---|---|---|---|---|`)
    for (const [name, { query, target }] of Object.entries(BENCH_QUERIES).filter(([n]) => !ONLY || n.includes(ONLY))) {
      try {
        await queries.run(project, query)
      } catch (err) {
        console.log(`| ${name} | refused: ${(err as Error).message.slice(0, 120)} | | | ${target} |`)
        continue
      }
      const walls: number[] = []
      const cpus: number[] = []
      for (let r = 0; r < RUNS; r++) {
        const cpu = process.cpuUsage()
        const t0 = performance.now()
        await queries.run(project, query)
        walls.push((performance.now() - t0) / 1000)
        const used = process.cpuUsage(cpu)
        cpus.push((used.user + used.system) / 1e6)
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
      console.log(`| ${name} | ${Math.min(...walls).toFixed(3)} | ${median(walls).toFixed(3)} | ${median(cpus).toFixed(3)} | ${target} |`)
    }
    await close()
  } finally {
    if (!process.env.BENCH_KEEP) await rm(dir, { recursive: true, force: true })
  }
}

await main()
