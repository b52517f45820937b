import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api'
import { runMigrations, type MigrationTarget } from '../sql/run-migrations.ts'

export interface DuckDb {
  connection: DuckDBConnection
  /**
   * Another connection to the same database, closed with it. `reads`: its statements are queries that
   * get the full `memoryLimit` while they run (the others, ingestion's writes, run under
   * `writeMemoryLimit`). `monitoring`: its statements (health pings, memory figures) do not count as
   * activity, so a scrape does not keep the cache from an idle trim.
   */
  connect(opts?: { reads?: boolean; monitoring?: boolean }): Promise<DuckDBConnection>
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
   * DuckDB's `threads` while no query has run for READ_GRACE_MS (queries get DuckDB's default, one
   * per core). An insert of a micro-batch parallelises poorly: on this 2-core machine one thread
   * inserted for ~20 % less CPU than two (bench/duckdb-insert.ts, batches of 2,000: 47-54 vs 58-70 ms
   * per 1,000 events; batches of 20: 400-500 vs 540-650), at ~10-15 % more wall time. Off when
   * absent or not lower.
   */
  writeThreads?: number
  /** How long after the last query the read mode stays (default READ_GRACE_MS). */
  readGraceMs?: number
}

/** What the cache is cut to by an idle trim: above what DuckDB keeps pinned at rest (~30 MB measured). */
const TRIM_LIMIT = '32MB'

/** How long after the last query the limit stays at `memoryLimit`: a dashboard's queries come in bursts. */
const READ_GRACE_MS = 15_000

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
  const instance = await DuckDBInstance.create(':memory:', {
    checkpoint_threshold: CHECKPOINT_THRESHOLD,
    allocator_background_threads: 'true',
    allocator_flush_threshold: '16MB',
    ...(file !== ':memory:' ? { temp_directory: `${file}.tmp` } : {}),
    ...(opts.memoryLimit ? { memory_limit: opts.memoryLimit } : {}),
  })
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
  // DuckDB's own default: one thread per core.
  const threads = Number((await connection.runAndReadAll(`SELECT current_setting('threads') AS t`)).getRowObjects()[0]!.t)
  const read: Mode = { memory: opts.memoryLimit ?? null, threads }
  const write: Mode = { memory: opts.memoryLimit ? writeLimitOf(opts.memoryLimit, opts) : null, threads: Math.min(opts.writeThreads ?? threads, threads) }
  // Without a lower write mode or an idle trim there is nothing to govern: statements go unwrapped.
  const governs = (opts.memoryLimit && (opts.idleTrimMs ?? 0) > 0) || read.memory !== write.memory || read.threads !== write.threads
  const governed = governs ? governor(await instance.connect(), read, write, opts) : null
  governed?.track(connection, 'write')
  return {
    connection,
    async connect(o = {}) {
      const c = await open()
      others.push(c)
      if (!o.monitoring) governed?.track(c, o.reads ? 'read' : 'write')
      return c
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

/** The settings the governor changes: DuckDB's memory limit (null: not governed) and threads. */
interface Mode {
  memory: string | null
  threads: number
}

/**
 * Sets DuckDB's memory limit and threads by what runs: the `read` mode while a query runs and for
 * READ_GRACE_MS after it, the `write` mode otherwise; and, after `idleTrimMs` without any statement
 * (with a memory limit), drops the cached blocks (checkpoint, limit lowered to TRIM_LIMIT for a
 * moment, then set back). Both are settings of the whole database, changed on a connection of its
 * own; changes are made one at a time. Entering the read mode never waits on a statement; the write
 * mode may be set while ingestion writes (DuckDB evicts to make room, and an insert that could not
 * get memory fails as a transient error and comes again; a statement running while the threads
 * change finishes on those left); a trim starts only when nothing runs, and statements issued
 * meanwhile wait for it, so none runs under TRIM_LIMIT.
 */
function governor(own: DuckDBConnection, read: Mode, write: Mode, opts: DuckDbOptions) {
  const idleMs = read.memory === null ? 0 : (opts.idleTrimMs ?? 0)
  const graceMs = opts.readGraceMs ?? READ_GRACE_MS
  const current: Mode = { ...read }
  let running = 0
  let reading = 0
  let lastActive = Date.now()
  let lastRead = 0
  let trimmedSince = false
  let changing: Promise<void> | null = null
  let trim: Promise<void> | null = null

  /** Runs one change of the settings after any in flight; a failure leaves them as they were. */
  function change(fn: () => Promise<void>): Promise<void> {
    const done: Promise<void> = (changing ?? Promise.resolve())
      .then(fn)
      .catch(() => undefined)
      .finally(() => {
        if (changing === done) changing = null
      })
    changing = done
    return done
  }

  const isIn = (m: Mode) => current.memory === m.memory && current.threads === m.threads

  async function enter(m: Mode): Promise<void> {
    if (current.threads !== m.threads) {
      await own.run(`SET threads = ${m.threads}`)
      current.threads = m.threads
    }
    // Lowering the limit fails while more is pinned: the threads are set either way.
    if (m.memory !== null && current.memory !== m.memory) {
      await own.run(`SET memory_limit = '${m.memory}'`)
      current.memory = m.memory
    }
  }

  async function around<T>(kind: 'read' | 'write', statement: () => Promise<T>): Promise<T> {
    while (trim) await trim
    running++
    if (kind === 'read') reading++
    try {
      // After any change to the write mode already queued, so a query never runs in it.
      if (kind === 'read' && (!isIn(read) || changing)) await change(() => enter(read))
      return await statement()
    } finally {
      running--
      if (kind === 'read') {
        reading--
        lastRead = Date.now()
      }
      lastActive = Date.now()
      trimmedSince = false
    }
  }

  async function trimNow(): Promise<void> {
    const back = (readsOver() ? write : read).memory!
    try {
      // Rows not yet checkpointed stay in memory (up to the checkpoint threshold's worth); written
      // to the file they become blocks the lowered limit can drop.
      await own.run(`CHECKPOINT ${DATABASE}`)
      await own.run(`SET memory_limit = '${TRIM_LIMIT}'`)
    } finally {
      // Whatever the statements before did, a working limit must be back before anything runs.
      await own.run(`SET memory_limit = '${back}'`)
      current.memory = back
    }
  }

  const readsOver = () => reading === 0 && Date.now() - lastRead >= graceMs
  const period = Math.max(50, Math.min(idleMs > 0 ? idleMs / 2 : 5000, graceMs / 3))
  const timer = setInterval(() => {
    if (changing) return
    if (idleMs > 0 && running === 0 && !trimmedSince && Date.now() - lastActive >= idleMs) {
      trim = change(trimNow).finally(() => {
        trim = null
        trimmedSince = true
      })
    } else if (!isIn(write) && readsOver()) {
      // The limit fails to go down while more than it is pinned; tried again on the next tick.
      void change(async () => {
        if (readsOver()) await enter(write)
      })
    }
  }, period)
  timer.unref()

  return {
    /** Counts this connection's statements (run, runAndReadAll) as activity, of the given kind. */
    track(c: DuckDBConnection, kind: 'read' | 'write'): void {
      const run = c.run.bind(c)
      const runAndReadAll = c.runAndReadAll.bind(c)
      c.run = (...args: Parameters<DuckDBConnection['run']>) => around(kind, () => run(...args))
      c.runAndReadAll = (...args: Parameters<DuckDBConnection['runAndReadAll']>) => around(kind, () => runAndReadAll(...args))
    },
    async stop(): Promise<void> {
      clearInterval(timer)
      while (changing) await changing
      own.closeSync()
    },
  }
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
