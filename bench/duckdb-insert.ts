// node --import tsx bench/duckdb-insert.ts — CPU of the DuckDB event store's write path alone, all
// threads (process.cpuUsage), per 1,000 events: BATCHES micro-batches of BATCH events as the worker
// hands them over (bench:ingest's posthog-js events through capture's own transform, with a person
// id and snapshot as the persons step adds them), then the CHECKPOINT that compresses them, each on
// a fresh database. Variants (VARIANTS=a,b to pick): `store` (the event store as it is), and
// prototypes of other ways in, some only to price a part (no materialized columns, no uuid key).
// Not a test: it prints.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { openDuckDb } from '../src/storage/duckdb/open-duckdb.ts'
import { MIGRATIONS } from '../src/app/create-adapters.ts'
import { createDuckDbEventStore } from '../src/storage/duckdb/duckdb-event-store.ts'
import { MATERIALIZED_COLUMNS, materializedExtractSql, materializedValuesSql } from '../src/storage/duckdb/materialized-properties.ts'
import { joinQueuedLines, pooledRandomBytes, transformCaptureRequest } from '../src/modules/capture/capture-transform.ts'
import { decodeQueuedEvent } from '../src/ingestion/queued-event.ts'
import type { StoredEvent } from '../src/ingestion/event-store.ts'
import { gzipBatchBody } from './ingest-payloads.ts'

const BATCHES = Number(process.env.BATCHES ?? 40)
const BATCH = Number(process.env.BATCH ?? 2500)
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

type Insert = (batch: StoredEvent[]) => Promise<unknown>
type Variant = (db: Awaited<ReturnType<typeof openDuckDb>>, dir: string) => Promise<Insert>

const COLS = `uuid, project_id, event, distinct_id, properties, elements_chain, timestamp, created_at, person_id, person_properties,
  group_0, group_1, group_2, group_3, group_4, ${MATERIALIZED_COLUMNS.join(', ')}`

/** TSV of plain columns: text fields wrapped in \x01 (doubled inside) only when they hold a tab, newline or \x01. */
function tsvField(v: string | null): string {
  if (v === null) return ''
  return /[\t\n\r\x01]/.test(v) || v === '' ? `\x01${v.replace(/\x01/g, '\x01\x01')}\x01` : v
}

function tsvPlain(events: StoredEvent[]): string {
  let out = ''
  for (const e of dedupe(events)) {
    out += `${e.uuid}\t${e.projectId}\t${tsvField(e.event)}\t${tsvField(e.distinctId)}\t${e.timestamp.getTime()}\t${e.createdAt.getTime()}\t${tsvField(e.elementsChain)}\t${e.personId ?? ''}\t${tsvField(e.personProperties ?? null)}\t\t\t\t\t\t${e.properties}\n`
  }
  return out
}

function dedupe(events: StoredEvent[]): StoredEvent[] {
  const seen = new Set<string>()
  return events.filter((e) => !seen.has(e.uuid) && (seen.add(e.uuid), true))
}

const PLAIN_SELECT = (file: string) => `SELECT uuid, project_id, event, distinct_id, p, elements_chain, make_timestamptz(ts * 1000), make_timestamptz(ca * 1000),
    person_id, person_properties, g0, g1, g2, g3, g4, ${materializedValuesSql('m').join(', ')}
  FROM (SELECT *, ${materializedExtractSql('p')} AS m FROM read_csv('${file}', delim = '\t', quote = '\x01', escape = '\x01', header = false,
    auto_detect = false, max_line_size = 2000000, allow_quoted_nulls = false, columns = {'uuid': 'UUID', 'project_id': 'INTEGER', 'event': 'VARCHAR', 'distinct_id': 'VARCHAR',
      'ts': 'BIGINT', 'ca': 'BIGINT', 'elements_chain': 'VARCHAR', 'person_id': 'UUID', 'person_properties': 'VARCHAR',
      'g0': 'VARCHAR', 'g1': 'VARCHAR', 'g2': 'VARCHAR', 'g3': 'VARCHAR', 'g4': 'VARCHAR', 'p': 'VARCHAR'}))`

const VARIANTS: Record<string, Variant> = {
  async store(db, dir) {
    const store = await createDuckDbEventStore(db, { stagingDir: path.join(dir, 'staging') })
    return (b) => store.insertBatch(b)
  },
  /** Plain TSV columns (no JSON header to parse), deduplicated in JS (no DISTINCT ON). */
  async tsvplain(db, dir) {
    const file = path.join(dir, 'b.tsv')
    return async (b) => {
      await writeFile(file, tsvPlain(b))
      await db.connection.run(`INSERT OR IGNORE INTO events (${COLS}) ${PLAIN_SELECT(file)}`)
    }
  },
  /** The store with DuckDB on one thread (SET threads = 1: the calling thread runs every task). */
  async store_threads1(db, dir) {
    await db.connection.run('SET threads = 1')
    const store = await createDuckDbEventStore(db, { stagingDir: path.join(dir, 'staging') })
    return (b) => store.insertBatch(b)
  },
  /** As tsvplain, without the materialized columns (what their extraction costs). */
  async tsvplain_nomat(db, dir) {
    const file = path.join(dir, 'b.tsv')
    return async (b) => {
      await writeFile(file, tsvPlain(b))
      await db.connection.run(`INSERT OR IGNORE INTO events (uuid, project_id, event, distinct_id, properties, elements_chain, timestamp, created_at, person_id, person_properties)
        SELECT uuid, project_id, event, distinct_id, p, elements_chain, make_timestamptz(ts * 1000), make_timestamptz(ca * 1000), person_id, person_properties
        FROM read_csv('${file}', delim = '\t', quote = '\x01', escape = '\x01', header = false, auto_detect = false, max_line_size = 2000000, allow_quoted_nulls = false,
          columns = {'uuid': 'UUID', 'project_id': 'INTEGER', 'event': 'VARCHAR', 'distinct_id': 'VARCHAR', 'ts': 'BIGINT', 'ca': 'BIGINT', 'elements_chain': 'VARCHAR',
            'person_id': 'UUID', 'person_properties': 'VARCHAR', 'g0': 'VARCHAR', 'g1': 'VARCHAR', 'g2': 'VARCHAR', 'g3': 'VARCHAR', 'g4': 'VARCHAR', 'p': 'VARCHAR'})`)
    }
  },
  /** As tsvplain into a table without the uuid PRIMARY KEY (what the index costs; not an option). */
  async tsvplain_nopk(db, dir) {
    const file = path.join(dir, 'b.tsv')
    await db.connection.run('CREATE TABLE events2 AS SELECT * FROM events LIMIT 0')
    await db.connection.run('DROP TABLE events')
    await db.connection.run('ALTER TABLE events2 RENAME TO events')
    return async (b) => {
      await writeFile(file, tsvPlain(b))
      await db.connection.run(`INSERT INTO events (${COLS}) ${PLAIN_SELECT(file)}`)
    }
  },
  /** NDJSON read with read_json (explicit columns). */
  async readjson(db, dir) {
    const file = path.join(dir, 'b.ndjson')
    return async (b) => {
      let out = ''
      for (const e of dedupe(b)) {
        out += `{"u":"${e.uuid}","pr":${e.projectId},"e":${JSON.stringify(e.event)},"d":${JSON.stringify(e.distinctId)},"t":${e.timestamp.getTime()},"c":${e.createdAt.getTime()},"ec":${JSON.stringify(e.elementsChain)},"pi":${JSON.stringify(e.personId)},"pp":${JSON.stringify(e.personProperties ?? null)},"p":${JSON.stringify(e.properties)}}\n`
      }
      await writeFile(file, out)
      await db.connection.run(`INSERT OR IGNORE INTO events (${COLS})
        SELECT u, pr, e, d, p, ec, make_timestamptz(t * 1000), make_timestamptz(c * 1000), pi, pp, NULL, NULL, NULL, NULL, NULL, ${materializedValuesSql('m').join(', ')}
        FROM (SELECT *, ${materializedExtractSql('p')} AS m FROM read_json('${file}', format = 'newline_delimited', maximum_object_size = 100000000,
          columns = {'u': 'UUID', 'pr': 'INTEGER', 'e': 'VARCHAR', 'd': 'VARCHAR', 't': 'BIGINT', 'c': 'BIGINT', 'ec': 'VARCHAR', 'pi': 'UUID', 'pp': 'VARCHAR', 'p': 'VARCHAR'}))`)
    }
  },
  /** The appender into a staging table, then one INSERT OR IGNORE ... SELECT (the uuid PK refuses the appender's duplicates). */
  async appender(db) {
    const c = db.connection
    await c.run(`CREATE TEMP TABLE staging (uuid UUID, project_id INTEGER, event VARCHAR, distinct_id VARCHAR, ts BIGINT, ca BIGINT, elements_chain VARCHAR, person_id UUID, person_properties VARCHAR, p VARCHAR)`)
    return async (b) => {
      const a = await c.createAppender('staging', 'temp')
      for (const e of dedupe(b)) {
        a.appendVarchar(e.uuid)
        a.appendInteger(e.projectId)
        a.appendVarchar(e.event)
        a.appendVarchar(e.distinctId)
        a.appendBigInt(BigInt(e.timestamp.getTime()))
        a.appendBigInt(BigInt(e.createdAt.getTime()))
        a.appendVarchar(e.elementsChain)
        if (e.personId === null) a.appendNull()
        else a.appendVarchar(e.personId)
        if (e.personProperties == null) a.appendNull()
        else a.appendVarchar(e.personProperties)
        a.appendVarchar(e.properties)
        a.endRow()
      }
      a.closeSync()
      await c.run(`INSERT OR IGNORE INTO events (${COLS})
        SELECT uuid, project_id, event, distinct_id, p, elements_chain, make_timestamptz(ts * 1000), make_timestamptz(ca * 1000), person_id, person_properties, NULL, NULL, NULL, NULL, NULL, ${materializedValuesSql('m').join(', ')}
        FROM (SELECT *, ${materializedExtractSql('p')} AS m FROM temp.staging)`)
      await c.run('DELETE FROM temp.staging')
    }
  },
}

async function main() {
  const events = makeEvents(BATCHES * BATCH)
  console.log(`${BATCHES} batches of ${BATCH} events, ${os.cpus().length} CPUs`)
  for (const [name, variant] of Object.entries(VARIANTS)) {
    if (only && !only.includes(name)) continue
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-duck-'))
    const db = await openDuckDb(path.join(dir, 'events.duckdb'), MIGRATIONS.duckdb)
    const insert = await variant(db, dir)
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    for (let i = 0; i < BATCHES; i++) await insert(events.slice(i * BATCH, (i + 1) * BATCH))
    const cpu1 = process.cpuUsage(cpu0)
    const t1 = performance.now()
    await db.connection.run('CHECKPOINT')
    const cpu2 = process.cpuUsage(cpu0)
    const t2 = performance.now()
    const n = (await db.connection.runAndReadAll('SELECT count(*)::INTEGER AS n FROM events')).getRowObjects()[0]!.n
    const per1000 = (us: number) => ((us / 1000) * 1000) / events.length
    const insertCpu = cpu1.user + cpu1.system
    const ckptCpu = cpu2.user + cpu2.system - insertCpu
    console.log(`${name.padEnd(14)} insert ${per1000(insertCpu).toFixed(1).padStart(5)} ms CPU/1,000 (${(t1 - t0).toFixed(0)} ms wall)  checkpoint ${per1000(ckptCpu).toFixed(1).padStart(5)} ms CPU/1,000 (${(t2 - t1).toFixed(0)} ms wall)  rows ${n}`)
    await db.close()
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
