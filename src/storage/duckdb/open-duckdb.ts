import { access, mkdir } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api'
import { runMigrations, type MigrationTarget } from '../sql/run-migrations.ts'
import { createDuckDbGovernor, type Mode } from './duckdb-governor.ts'
import { createDuckDbThreadPriority } from './duckdb-thread-priority.ts'
import { runOnDuckDbThreads } from './run-on-duckdb-threads.ts'

export interface DuckDb {
  connection: DuckDBConnection
  /**
   * Another connection to the same database, closed with it. `reads`: its statements are queries that
   * get the full `memoryLimit` while they run (the others, ingestion's writes, run under
   * `writeMemoryLimit`), and its `runAndReadAll` computes on DuckDB's scheduler threads only
   * (`queryThreads` of them), never holding a thread of libuv's pool (run-on-duckdb-threads.ts). `monitoring`: its statements (health pings, memory figures) do not count as
   * activity, so a scrape does not keep the cache from an idle trim.
   */
  connect(opts?: { reads?: boolean; monitoring?: boolean }): Promise<DuckDBConnection>
  /** Closes a connection that `connect` opened, before the database closes (e.g. one per export). */
  disconnect(c: DuckDBConnection): void
  /** Closes every connection and the instance: the file is free for another process afterwards. */
  close(): Promise<void>
}

export interface DuckDbOptions {
  /**
   * DuckDB's `memory_limit` (e.g. '512MB'; default DuckDB's own, 80 % of the machine's RAM). Past it
   * DuckDB evicts cached table blocks and spills large sorts, joins and aggregates to disk. Without
   * one, every block written at a checkpoint stayed cached: a 10-minute soak at 3,000 events/s took
   * DuckDB's memory from 275 MB to 1,633 MB and it stayed there idle (bench/soak.ts).
   */
  memoryLimit?: string
  /**
   * With a `memoryLimit`: the limit while no query (a statement on a `reads` connection) has run for
   * READ_GRACE_MS, i.e. while only ingestion writes. Ingestion writes each block once and never reads
   * it back, so the blocks DuckDB keeps cached up to its limit serve nobody; queries, which sort,
   * join and aggregate, are what a larger limit is for (bench:query, 10M events: the funnel costs
   * 32 % more CPU under 256MB than under 512MB). Measured under a steady 3,000 events/s (bench:soak,
   * 3 minutes): peak RSS 949 MB with 512MB, 724 MB with 256MB; since inserts need little memory
   * (duckdb-event-store.ts: 10,000 events of 2 KB under 32MB), 128MB: the 10-minute soak's peak
   * 734 -> 603 MB. Off when absent or not lower.
   */
  writeMemoryLimit?: string
  /**
   * With a `memoryLimit`: once no statement has run for this many milliseconds, the cached blocks
   * are dropped (the limit is lowered to TRIM_LIMIT for a moment, then set back; statements issued
   * meanwhile wait). DuckDB keeps every block it has read or written cached up to its limit, and
   * frees them only when it needs the room: after a load, hundreds of MB stay resident while idle
   * (measured: 1.5M events inserted, RSS 497 MB idle, 288 MB after a trim; a full scan afterwards
   * brought 16 MB back). Off when 0 or absent.
   */
  idleTrimMs?: number
  /**
   * DuckDB's scheduler threads, which alone compute queries (`reads` connections): the CPU all
   * queries together may take, in cores, however many run (default: one core fewer than the
   * machine has, at least 1). DuckDB's `threads` is this plus one while a query runs.
   */
  queryThreads?: number
  /**
   * Nice value given to DuckDB's own threads (Linux; 0 or absent: none), so that a query yields a
   * core to the event loop whenever it has work (duckdb-thread-priority.ts).
   */
  threadNice?: number
  /**
   * DuckDB's `threads` while no query has run for READ_GRACE_MS (queries get `queryThreads` + 1). An insert of a micro-batch parallelises poorly: on this 2-core machine one thread
   * inserted for ~20 % less CPU than two (bench/duckdb-insert.ts, batches of 2,000: 47-54 vs 58-70 ms
   * per 1,000 events; batches of 20: 400-500 vs 540-650), at ~10-15 % more wall time. Off when
   * absent or not lower.
   */
  writeThreads?: number
  /** How long after the last query the read mode stays (default READ_GRACE_MS). */
  readGraceMs?: number
}

/** The name the events file is attached under; every connection `USE`s it. */
const DATABASE = 'tally'

/**
 * Rows per row group (DuckDB's default: 122,880). A checkpoint rewrites the row group being filled
 * whole, so both its transient memory and the cost of checkpointing often follow this size. With
 * 16,384 rows a checkpoint every 64 MB of WAL costs no more insert CPU than one every 256 MB did
 * with the default (bench/duckdb-insert.ts, 200,000 events, insert + checkpoint: 35-36 vs 40-43 ms
 * per 1,000), and holds a quarter of the uncheckpointed rows; a 3-minute bench:soak peaked at
 * 949 MB against 1,209 (both with a 512MB memory limit). Queries pay a little for the smaller
 * groups (bench:query, 10M events: +2-7 % CPU for trends, DAU and retention, funnel unchanged).
 * The rows not yet checkpointed stay in DuckDB's memory: with 32 MB of WAL instead of 64 a 10-minute
 * bench:soak held ~55-60 MB of DuckDB's memory between checkpoints rather than ~95-122, and peaked at
 * 585-595 MB against 608-619 (two runs against three), for about the same CPU (450-490 vs 451 ms per s).
 */
const ROW_GROUP_SIZE = 16_384
const CHECKPOINT_THRESHOLD = '32MB'

/** Opens (creating if needed) the DuckDB file `file` (or `:memory:`) and applies its migrations. */
export async function openDuckDb(file: string, migrationsDir: string, opts: DuckDbOptions = {}): Promise<DuckDb> {
  if (file !== ':memory:') await mkdir(path.dirname(file), { recursive: true })
  // Every commit's WAL is fsync'd either way; the checkpoint threshold only sets how many rows wait
  // in memory (and in the WAL, for replay after a crash) before being written to the file.
  // DuckDB allocates through its own jemalloc, which kept freed pages resident: after a 15 s /batch/
  // load, ~300 MB more RSS stayed with the process than with background purging and a 16 MB flush
  // threshold (a 15 s load of bench/soak.ts: RSS left afterwards 1,137 vs 618-909 MB).
  // DuckDB takes a row group size only when a file is attached, so the instance's own database is an
  // empty in-memory one and the file is attached beside it (spills go where they would for the file).
  const priority = createDuckDbThreadPriority(opts.threadNice ?? 0)
  // libuv's pool starts its threads on first use: before the window in which new threads are DuckDB's.
  await access(os.tmpdir())
  const instance = await priority.around(() => DuckDBInstance.create(':memory:', {
    checkpoint_threshold: CHECKPOINT_THRESHOLD,
    allocator_background_threads: 'true',
    allocator_flush_threshold: '16MB',
    ...(file !== ':memory:' ? { temp_directory: `${file}.tmp` } : {}),
    ...(opts.memoryLimit ? { memory_limit: opts.memoryLimit } : {}),
    // A scheduler thread takes a slice of a task and puts it back, rather than running it to its
    // end: statements sharing the threads take turns.
    scheduler_process_partial: 'true',
  }))
  const open = async (): Promise<DuckDBConnection> => {
    const c = await instance.connect()
    await c.run(`USE ${DATABASE}`)
    return c
  }
  const attaching = await instance.connect()
  await attaching.run(`ATTACH '${file.replaceAll("'", "''")}' AS ${DATABASE} (ROW_GROUP_SIZE ${ROW_GROUP_SIZE})`)
  attaching.closeSync()
  const connection = await open()
  await runDuckDbMigrations(connection, migrationsDir)
  const others: DuckDBConnection[] = []
  // The calling thread plus the scheduler threads that compute queries (reads never call in).
  const threads = 1 + Math.max(1, opts.queryThreads ?? defaultQueryThreads())
  await priority.around(() => connection.run(`SET threads = ${threads}`))
  const read: Mode = { memory: opts.memoryLimit ?? null, threads }
  const write: Mode = { memory: opts.memoryLimit ? writeLimitOf(opts.memoryLimit, opts) : null, threads: Math.min(opts.writeThreads ?? threads, threads) }
  // Without a lower write mode or an idle trim there is nothing to govern: statements go unwrapped.
  const governs = (opts.memoryLimit && (opts.idleTrimMs ?? 0) > 0) || read.memory !== write.memory || read.threads !== write.threads
  const governed = governs ? createDuckDbGovernor(await instance.connect(), read, write, { ...opts, database: DATABASE, priority }) : null
  governed?.track(connection, 'write')
  return {
    connection,
    async connect(o = {}) {
      const c = await open()
      others.push(c)
      if (o.reads) c.runAndReadAll = (sql, values) => runOnDuckDbThreads(c, sql, values as DuckDBValue[] | undefined)
      if (!o.monitoring) governed?.track(c, o.reads ? 'read' : 'write')
      return c
    },
    disconnect(c) {
      const i = others.indexOf(c)
      if (i < 0) return
      others.splice(i, 1)
      c.closeSync()
    },
    async close() {
      await governed?.stop()
      // A checkpoint folds the WAL into the main file so the next start opens quickly.
      await connection.run(`CHECKPOINT ${DATABASE}`)
      for (const c of others) c.closeSync()
      connection.closeSync()
      instance.closeSync()
    },
  }
}

/** One core fewer than the machine has (at least one): the rest stay for capture, flags and the event loop. */
function defaultQueryThreads(): number {
  return Math.max(1, os.availableParallelism() - 1)
}

/** The limit while only ingestion writes: `writeMemoryLimit` when it is lower than `limit`, else `limit`. */
function writeLimitOf(limit: string, opts: DuckDbOptions): string {
  return opts.writeMemoryLimit && sizeBytes(opts.writeMemoryLimit) < sizeBytes(limit) ? opts.writeMemoryLimit : limit
}

/** Bytes of a size as the configuration writes it (512MB, 64kB, 1GB). */
function sizeBytes(size: string): number {
  const m = /^(\d+)\s*(kB|MB|GB)$/i.exec(size)
  if (!m) return Number.NaN
  return Number(m[1]) * { kb: 1e3, mb: 1e6, gb: 1e9 }[m[2]!.toLowerCase() as 'kb' | 'mb' | 'gb']
}


/**
 * The DuckDB connection seen through the migration runner's three methods, so DuckDB's event-store
 * migrations go through the same runner (checksums, forward-only) as the metadata ones. One process
 * owns a DuckDB file, so no lock is needed.
 */
function runDuckDbMigrations(c: DuckDBConnection, dir: string): Promise<string[]> {
  const tx: MigrationTarget = {
    query: async <R,>(sql: string, params?: unknown[]) =>
      (await c.runAndReadAll(sql, params as DuckDBValue[] | undefined)).getRowObjects() as R[],
    exec: async (sql: string) => {
      await c.run(sql)
    },
    async inTransaction<T>(fn: (t: MigrationTarget) => Promise<T>): Promise<T> {
      await c.run('BEGIN TRANSACTION')
      try {
        const result = await fn(tx)
        await c.run('COMMIT')
        return result
      } catch (err) {
        await c.run('ROLLBACK')
        throw err
      }
    },
  }
  return runMigrations(tx, dir, { lockSql: null, transactionPerFile: true })
}
