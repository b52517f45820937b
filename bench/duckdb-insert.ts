// node --import tsx bench/duckdb-insert.ts — CPU of the DuckDB event store's write path alone, all
// threads (process.cpuUsage), per 1,000 events, as the table grows: BATCHES micro-batches of BATCH
// events as the worker hands them over (bench:ingest's posthog-js events through capture's own
// transform, with a person id and snapshot as the persons step adds them, each batch with new uuids:
// UUIDS=v7 as posthog-js, posthog-node and Tally's capture make them, or v4 as posthog-python does),
// printed every STEP events with DuckDB's memory by tag, then the CHECKPOINT, on a fresh file under
// LIMIT (DuckDB's memory limit; 256MB, the write limit) and THREADS (DuckDB's `threads`; default one
// per core, the server's writes run on TALLY_DUCKDB_WRITE_THREADS). Variants (VARIANTS=a,b to pick):
// `store` (the event store as it is), `keyed` (the same into the table with the uuid PRIMARY KEY it
// had before migration 0007). Not a test: it prints.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { randomFillSync, randomUUID } from 'node:crypto'
import { openDuckDb, type DuckDb } from '../src/storage/duckdb/open-duckdb.ts'
import { MIGRATIONS } from '../src/app/create-adapters.ts'
import { createDuckDbEventStore } from '../src/storage/duckdb/duckdb-event-store.ts'
import { joinQueuedLines, pooledRandomBytes, transformCaptureRequest } from '../src/modules/capture/capture-transform.ts'
import { decodeQueuedEvent } from '../src/ingestion/queued-event.ts'
import { uuidv7 } from '../src/domain/events/uuidv7.ts'
import type { StoredEvent } from '../src/ingestion/event-store.ts'
import { gzipBatchBody } from './ingest-payloads.ts'

const BATCHES = Number(process.env.BATCHES ?? 100)
const BATCH = Number(process.env.BATCH ?? 2000)
const STEP = Number(process.env.STEP ?? 50_000)
const LIMIT = process.env.LIMIT ?? '256MB'
const V4 = process.env.UUIDS === 'v4'
const THREADS = process.env.THREADS ? Number(process.env.THREADS) : null
const only = process.env.VARIANTS?.split(',')

function makeEvents(n: number): StoredEvent[] {
  const out: StoredEvent[] = []
  const random = pooledRandomBytes()
  for (let seed = 0; out.length < n; seed++) {
    const body = gzipBatchBody('phc_bench', 100, seed)
    const t = transformCaptureRequest({ body: { body, contentType: 'application/json', contentEncoding: 'gzip', query: {}, method: 'POST', maxBytes: 1e8 }, isEngage: false, bearer: null, ip: '10.1.2.3', nowMs: Date.now() }, random)
    for (const line of joinQueuedLines(t, 1)) {
      const e = decodeQueuedEvent(line)
      e.personId = randomUUID()
      e.personProperties = '{"email":"someone@example.com","plan":"pro"}'
      out.push(e)
    }
  }
  return out.slice(0, n)
}

const random = (n: number) => randomFillSync(new Uint8Array(n))
let clock = Date.now() - 86_400_000
/** The batch's events with new uuids, made before the clock starts. */
const withNewUuids = (events: StoredEvent[]) => events.map((e) => ({ ...e, uuid: V4 ? randomUUID() : uuidv7(clock++, random) }))

type Insert = (batch: StoredEvent[]) => Promise<unknown>
type Variant = (db: DuckDb, dir: string) => Promise<Insert>

const VARIANTS: Record<string, Variant> = {
  async store(db, dir) {
    const store = await createDuckDbEventStore(db, { stagingDir: path.join(dir, 'staging') })
    return (b) => store.insertBatch(b)
  },
  async keyed(db, dir) {
    const ddl = (await db.connection.runAndReadAll(`SELECT sql FROM duckdb_tables() WHERE table_name = 'events'`)).getRowObjects()[0]!.sql as string
    await db.connection.run('DROP TABLE events')
    await db.connection.run(ddl.replace(/\);\s*$/, ', PRIMARY KEY (uuid));'))
    const store = await createDuckDbEventStore(db, { stagingDir: path.join(dir, 'staging') })
    return (b) => store.insertBatch(b)
  },
}

async function memoryByTag(db: DuckDb): Promise<string> {
  const c = await db.connect({ monitoring: true })
  const rows = (await c.runAndReadAll(`SELECT tag, round(memory_usage_bytes / 1e6)::INTEGER AS mb FROM duckdb_memory() WHERE memory_usage_bytes > 1e6`)).getRowObjects()
  return rows.map((r) => `${r.tag} ${r.mb} MB`).join(', ')
}

async function main() {
  const base = makeEvents(BATCH)
  console.log(`${BATCHES} batches of ${BATCH} events, ${V4 ? 'v4' : 'v7'} uuids, memory limit ${LIMIT}, ${os.cpus().length} CPUs`)
  for (const [name, variant] of Object.entries(VARIANTS)) {
    if (only && !only.includes(name)) continue
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-duck-'))
    const db = await openDuckDb(path.join(dir, 'events.duckdb'), MIGRATIONS.duckdb, { memoryLimit: LIMIT })
    if (THREADS !== null) await db.connection.run(`SET threads = ${THREADS}`)
    const insert = await variant(db, dir)
    let cpu = 0
    let wall = 0
    let total = 0
    let failed: unknown = null
    for (let i = 0; i < BATCHES && !failed; i++) {
      const batch = withNewUuids(base)
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      try {
        await insert(batch)
      } catch (err) {
        failed = err
      }
      const used = process.cpuUsage(cpu0)
      cpu += used.user + used.system
      wall += performance.now() - t0
      total += batch.length
      if (total % STEP === 0 || failed) {
        const n = total % STEP || STEP
        console.log(`${name.padEnd(6)} ${String(total).padStart(9)} events: ${(cpu / n).toFixed(1).padStart(5)} ms CPU/1,000 (${(wall / (n / 1000)).toFixed(1)} ms wall)  ${await memoryByTag(db)}`)
        cpu = 0
        wall = 0
      }
    }
    if (failed) console.log(`${name}: the insert failed after ${total - BATCH} events: ${String(failed).split('\n')[0]}`)
    const cpu0 = process.cpuUsage()
    if (!failed) await db.connection.run('CHECKPOINT')
    const ckpt = process.cpuUsage(cpu0)
    const n = (await db.connection.runAndReadAll('SELECT count(*)::INTEGER AS n FROM events')).getRowObjects()[0]!.n
    console.log(`${name.padEnd(6)} final checkpoint ${((ckpt.user + ckpt.system) / 1000).toFixed(0)} ms CPU, rows ${n}`)
    await db.close()
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
