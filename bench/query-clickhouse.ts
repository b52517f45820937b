// ClickHouse beside DuckDB for `npm run bench:query`: a clickhouse-server of the bench's own (loopback,
// random ports, a data dir under the temp dir), loaded with the rows of the DuckDB file generated again
// inside ClickHouse (`INSERT ... SELECT ... FROM numbers()`: the copy through the event store ran at
// 2,800-6,900 events/s, ~1 h for 10M), and its own CPU read from /proc, so the server's work is counted
// apart from Node's. A slice is also copied through Tally's event store, which fills the property arrays
// and materialized columns as ingestion does, and must equal the generated rows.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import { MIGRATIONS } from '../src/app/create-adapters.ts'
import type { StoredEvent } from '../src/ingestion/event-store.ts'
import type { QueryEngine } from '../src/modules/query/query-engine.ts'
import { createClickHouseEventStore } from '../src/storage/clickhouse/clickhouse-event-store.ts'
import { createClickHouseQueryEngine } from '../src/storage/clickhouse/clickhouse-query-engine.ts'
import { openClickHouse, type ClickHouse } from '../src/storage/clickhouse/open-clickhouse.ts'
import { clickHouseGenerateSql, type BenchShape } from './query-data.ts'

const BINARY = ['/usr/sbin/clickhouse-server', '/usr/bin/clickhouse-server'].find((p) => existsSync(p))
const TICKS = 100 // USER_HZ

export interface BenchClickHouse {
  engine: QueryEngine
  /** CPU seconds the server process has used so far (user + system). */
  serverCpu(): number
  close(): Promise<void>
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo
      s.close(() => resolve(port))
    })
  })
}

async function startServer(dir: string): Promise<{ url: string; proc: ChildProcess }> {
  if (!BINARY) throw new Error('clickhouse-server is not installed')
  const [http, tcp] = [await freePort(), await freePort()]
  await mkdir(dir, { recursive: true })
  await writeFile(path.join(dir, 'config.xml'), `<?xml version="1.0"?><yandex><logger><level>warning</level><console>1</console></logger>
<listen_host>127.0.0.1</listen_host><http_port>${http}</http_port><tcp_port>${tcp}</tcp_port><path>${dir}/data/</path><tmp_path>${dir}/data/tmp/</tmp_path>
<user_files_path>${dir}/data/user_files/</user_files_path><format_schema_path>${dir}/data/format_schemas/</format_schema_path><mark_cache_size>5368709</mark_cache_size>
<users_config>users.xml</users_config><default_profile>default</default_profile><default_database>default</default_database><timezone>UTC</timezone></yandex>`)
  await writeFile(path.join(dir, 'users.xml'), `<?xml version="1.0"?><yandex><profiles><default></default></profiles><users><default><password></password>
<networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users><quotas><default></default></quotas></yandex>`)
  const proc = spawn(BINARY, [`--config-file=${path.join(dir, 'config.xml')}`], { stdio: ['ignore', 'ignore', 'inherit'] })
  for (let i = 0; i < 400; i++) {
    if (await fetch(`http://127.0.0.1:${http}/ping`).then((r) => r.ok, () => false)) return { url: `http://default:@127.0.0.1:${http}`, proc }
    await new Promise((r) => setTimeout(r, 50))
  }
  proc.kill('SIGKILL')
  throw new Error('clickhouse-server did not start')
}

/** Rows copied through the event store to check the generated rows against what ingestion stores. */
const SAMPLE = 2_000
/** Rows generated per INSERT (10M in one statement outlasted the client's 300 s timeout at load average ~25). */
const SLICE = 1_000_000

/**
 * Starts a server under `dir`, generates the bench's rows in it (`clickHouseGenerateSql`, the same rows
 * as the DuckDB file's), checks a slice of them against the same rows copied from DuckDB through Tally's
 * ClickHouse event store, and returns its query engine.
 */
export async function loadClickHouse(duck: DuckDBConnection, shape: BenchShape, dir: string, threads: number): Promise<BenchClickHouse> {
  const { url, proc } = await startServer(dir)
  let ch: ClickHouse
  try {
    ch = await openClickHouse(`${url}/bench`, MIGRATIONS.clickhouse)
    const t0 = performance.now()
    // In slices, each statement well within the client's request timeout on a loaded machine.
    for (let first = 0; first < shape.events; first += SLICE) await ch.exec(clickHouseGenerateSql(shape, 'events', first, Math.min(SLICE, shape.events - first)))
    console.log(`ClickHouse: generated ${shape.events.toLocaleString()} events in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    await checkAgainstEventStore(duck, ch, url, shape)
  } catch (err) {
    proc.kill('SIGKILL')
    throw err
  }
  const serverCpu = () => {
    const fields = readFileSync(`/proc/${proc.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS
  }
  return {
    engine: createClickHouseQueryEngine(ch, { concurrency: 1, threads }),
    serverCpu,
    async close() {
      await ch.close()
      const exited = new Promise((r) => proc.once('exit', r))
      proc.kill('SIGTERM')
      await exited
    },
  }
}

/** Copies the first SAMPLE events of the DuckDB file through the event store and compares them with the generated rows. */
async function checkAgainstEventStore(duck: DuckDBConnection, ch: ClickHouse, url: string, shape: BenchShape): Promise<void> {
  const sample = await openClickHouse(`${url}/bench_sample`, MIGRATIONS.clickhouse)
  try {
    const store = await createClickHouseEventStore(sample, { dedupWindow: SAMPLE })
    const reader = await duck.runAndReadAll(`SELECT CAST(uuid AS VARCHAR) AS uuid, project_id, event, distinct_id, properties, elements_chain, epoch_ms(timestamp) AS ts,
      epoch_ms(created_at) AS created, CAST(person_id AS VARCHAR) AS person_id, person_properties FROM events ORDER BY timestamp LIMIT ${SAMPLE}`)
    const events: StoredEvent[] = reader.getRowObjects().map((r) => ({
      uuid: String(r.uuid), projectId: Number(r.project_id), event: String(r.event), distinctId: String(r.distinct_id), properties: String(r.properties),
      elementsChain: String(r.elements_chain ?? ''), timestamp: new Date(Number(r.ts)), createdAt: new Date(Number(r.created)),
      personId: r.person_id === null ? null : String(r.person_id), personProperties: r.person_properties === null ? null : String(r.person_properties),
    }))
    await store.insertBatch(events)
    await store.close()
    const rows = (db: string) => ch.query(`SELECT * FROM ${db}.events ORDER BY timestamp_ms, uuid LIMIT ${SAMPLE}`)
    const [stored, generated] = [JSON.stringify(await rows('bench_sample')), JSON.stringify(await rows('bench'))]
    if (stored !== generated) throw new Error(`ClickHouse: the generated rows differ from the event store's copy of the same events (first ${SAMPLE}); shape ${JSON.stringify(shape)}`)
    console.log(`ClickHouse: the first ${SAMPLE.toLocaleString()} generated rows equal the event store's copy of them`)
  } finally {
    await sample.exec('DROP DATABASE IF EXISTS bench_sample')
    await sample.close()
  }
}
