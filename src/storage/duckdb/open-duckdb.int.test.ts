import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test, type TestContext } from 'node:test'
import { MIGRATIONS } from '../../app/create-adapters.ts'
import { openDuckDb, type DuckDb, type DuckDbOptions } from './open-duckdb.ts'

const MB = 1024 * 1024

async function tableCacheBytes(db: DuckDb): Promise<number> {
  const monitor = await db.connect({ monitoring: true })
  const rows = (await monitor.runAndReadAll(`SELECT memory_usage_bytes::DOUBLE AS b FROM duckdb_memory() WHERE tag = 'BASE_TABLE'`)).getRowObjects()
  return Number(rows[0]?.b ?? 0)
}

/** A DuckDB file in a temporary directory, opened as the app opens it; both go when the test ends. */
async function fileDuckDb(t: TestContext, opts: DuckDbOptions): Promise<DuckDb> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-duck-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const db = await openDuckDb(path.join(dir, 'events.duckdb'), MIGRATIONS.duckdb, opts)
  t.after(() => db.close())
  return db
}

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, 50))
  }
  return check()
}

test('idle trim: cached table blocks are dropped once no statement has run for the idle time, and the limit is restored', async (t) => {
  const db = await fileDuckDb(t, { memoryLimit: '512MB', idleTrimMs: 400 })
  const c = await db.connect()
  // Table blocks (incompressible text, well over 64 MB) written by a checkpoint, then read back by a scan: all cached.
  await c.run(`CREATE TABLE t AS SELECT i, md5(i::VARCHAR) || md5((i * 7)::VARCHAR) || md5((i * 13)::VARCHAR) AS s FROM range(1500000) r(i)`)
  await c.run('CHECKPOINT')
  await c.runAndReadAll('SELECT count(DISTINCT s) FROM t')
  const loaded = await tableCacheBytes(db)
  assert.ok(loaded > 64 * MB, `the scan cached ${(loaded / MB).toFixed(0)} MB`)

  // Statements keep it: none is dropped while one runs at least every 100 ms.
  for (let i = 0; i < 8; i++) {
    await c.runAndReadAll('SELECT count(*) FROM t')
    await new Promise((r) => setTimeout(r, 100))
  }
  assert.ok((await tableCacheBytes(db)) > 64 * MB, 'trimmed while statements were running')

  // Monitoring statements do not count as activity: the trim comes all the same.
  assert.ok(await until(async () => (await tableCacheBytes(db)) < 32 * MB, 5000), `still ${((await tableCacheBytes(db)) / MB).toFixed(0)} MB after idling`)
  const limit = (await c.runAndReadAll("SELECT current_setting('memory_limit') AS m")).getRowObjects()[0]!.m
  assert.match(String(limit), /^48\d\.\d MiB$/, `memory_limit back to 512MB (DuckDB shows it in MiB): ${limit}`)
  // The data is all there, read back from the file.
  const n = (await c.runAndReadAll('SELECT count(*)::INTEGER AS n FROM t')).getRowObjects()[0]!.n
  assert.equal(n, 1_500_000)
})

test('idle trim: off without an idle time', async (t) => {
  const db = await fileDuckDb(t, { memoryLimit: '512MB' })
  const c = await db.connect()
  await c.run(`CREATE TABLE t AS SELECT i, md5(i::VARCHAR) || md5((i * 7)::VARCHAR) || md5((i * 13)::VARCHAR) AS s FROM range(1500000) r(i)`)
  await c.run('CHECKPOINT')
  await c.runAndReadAll('SELECT count(DISTINCT s) FROM t')
  await new Promise((r) => setTimeout(r, 1000))
  assert.ok((await tableCacheBytes(db)) > 64 * MB)
})

test('the file is written in row groups of 16,384 rows, and a reopened file has its tables and rows', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-duck-rowgroups-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'events.duckdb')
  const first = await openDuckDb(file, MIGRATIONS.duckdb)
  const c = await first.connect()
  await c.run('CREATE TABLE t AS SELECT i FROM range(100000) r(i)')
  await first.close()

  const again = await openDuckDb(file, MIGRATIONS.duckdb)
  t.after(() => again.close())
  const reader = await again.connect()
  const groups = (
    await reader.runAndReadAll(`SELECT row_group_id, max(count)::INTEGER AS n FROM pragma_storage_info('t') GROUP BY 1 ORDER BY 1`)
  ).getRowObjects()
  assert.deepEqual(groups.map((g) => g.n), [...Array(6).fill(16384), 100000 - 6 * 16384])
  const n = (await reader.runAndReadAll('SELECT count(*)::INTEGER AS n, sum(i)::BIGINT AS s FROM t')).getRowObjects()[0]!
  assert.deepEqual([n.n, n.s], [100000, 4999950000n])
  // The migrations' own tables came back too (a second open applies none again).
  const tables = (await again.connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM duckdb_tables() WHERE table_name = 'events'`)).getRowObjects()
  assert.equal(tables[0]!.n, 1)
})

type Reads = { runAndReadAll(sql: string): Promise<{ getRowObjects(): Record<string, unknown>[] }> }

/** A DuckDB setting as the connection sees it. */
async function setting(c: Reads, name: string): Promise<string> {
  return String((await c.runAndReadAll(`SELECT current_setting('${name}') AS v`)).getRowObjects()[0]!.v)
}

const limitMiB = async (c: Reads) => Math.round(parseFloat(await setting(c, 'memory_limit')))
const threadsOf = async (c: Reads) => Number(await setting(c, 'threads'))

/** The connections the governor tests look through: one that does not count, a writer, a reader. */
async function connections(db: DuckDb) {
  return { monitor: await db.connect({ monitoring: true }), writer: await db.connect(), reader: await db.connect({ reads: true }) }
}

test('memory limit: the write limit while no query runs, the full one while a query runs and for the grace after it', async (t) => {
  const db = await openDuckDb(':memory:', MIGRATIONS.duckdb, { memoryLimit: '512MB', writeMemoryLimit: '256MB', readGraceMs: 600 })
  t.after(() => db.close())
  const { monitor, writer, reader } = await connections(db)
  // 512MB = 488 MiB, 256MB = 244 MiB (DuckDB shows MiB).
  assert.ok(await until(async () => (await limitMiB(monitor)) === 244, 5000), 'lowered to the write limit when no query has run')
  assert.equal(await limitMiB(writer), 244, 'a write runs under the write limit')
  assert.equal(await limitMiB(reader), 488, 'a query runs under the full limit')
  assert.equal(await limitMiB(monitor), 488, 'and it stays for the grace period')
  assert.ok(await until(async () => (await limitMiB(monitor)) === 244, 5000), 'lowered again after the grace period')
  // Queries at once, with writes between: each runs under the full limit.
  const seen = await Promise.all([...Array(6)].map((_, i) => (i % 2 ? limitMiB(writer) : limitMiB(reader))))
  assert.deepEqual(seen.filter((_, i) => i % 2 === 0), [488, 488, 488])
})

test('threads: the write threads while no query runs, the query threads + 1 while a query runs and for the grace after it', async (t) => {
  const cores = 3
  const db = await openDuckDb(':memory:', MIGRATIONS.duckdb, { writeThreads: 1, queryThreads: cores - 1, readGraceMs: 600 })
  t.after(() => db.close())
  const { monitor, writer, reader } = await connections(db)
  assert.ok(await until(async () => (await threadsOf(monitor)) === 1, 5000), 'one thread when no query has run (without a memory limit too)')
  assert.equal(await threadsOf(writer), 1, 'a write runs on one')
  assert.equal(await threadsOf(reader), cores, 'a query gets the query threads and the calling one')
  assert.equal(await threadsOf(monitor), cores, 'and keeps them for the grace period')
  assert.ok(await until(async () => (await threadsOf(monitor)) === 1, 5000), 'one again after the grace period')
  // A query that runs with the writer's rows sees all of them.
  await writer.run('CREATE TABLE n AS SELECT range AS i FROM range(100000)')
  const sum = (await reader.runAndReadAll('SELECT sum(i)::BIGINT AS s FROM n')).getRowObjects()[0]!.s
  assert.equal(sum, 4999950000n)
})

test('idle trim: rows not yet checkpointed are written out first, so the cache still drops below the trim limit', async (t) => {
  const db = await fileDuckDb(t, { memoryLimit: '512MB', idleTrimMs: 400 })
  const c = await db.connect()
  await c.run('CREATE TABLE t (i BIGINT, s VARCHAR)')
  // Commits smaller than a row group (larger ones go to the file at once), together under the
  // checkpoint threshold (raised here above Tally's 32MB, so that more rows wait than the trim
  // limit could hold): their rows stay in memory (IN_MEMORY_TABLE), as ingestion's do.
  await c.run(`SET checkpoint_threshold = '1GB'`)
  for (let k = 0; k < 100; k++) {
    await c.run(`INSERT INTO t SELECT i, md5(i::VARCHAR) || md5((i * 7)::VARCHAR) FROM range(${k * 6_000}, ${(k + 1) * 6_000}) r(i)`)
  }
  const monitor = await db.connect({ monitoring: true })
  const inMemory = async () =>
    Number((await monitor.runAndReadAll(`SELECT sum(memory_usage_bytes)::DOUBLE AS b FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'`)).getRowObjects()[0]!.b ?? 0)
  const total = async () => Number((await monitor.runAndReadAll(`SELECT sum(memory_usage_bytes)::DOUBLE AS b FROM duckdb_memory()`)).getRowObjects()[0]!.b ?? 0)
  const before = await inMemory()
  assert.ok(before > 32 * MB, `${(before / MB).toFixed(0)} MB of rows held in memory before the trim`)
  assert.ok(await until(async () => (await total()) < 32 * MB, 8000), `still ${((await total()) / MB).toFixed(0)} MB after idling`)
  const n = (await c.runAndReadAll('SELECT count(*)::INTEGER AS n FROM t')).getRowObjects()[0]!.n
  assert.equal(n, 600_000)
})
