import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api'
import { runMigrations, type MigrationTarget } from '../sql/run-migrations.ts'

export interface DuckDb {
  connection: DuckDBConnection
  /**
   * Another connection to the same database, closed with it. `monitoring`: its statements (health
   * pings, memory figures) do not count as activity, so a scrape does not keep the cache from an idle trim.
   */
  connect(opts?: { monitoring?: boolean }): Promise<DuckDBConnection>
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
   * With a `memoryLimit`: once no statement has run for this many milliseconds, the cached blocks
   * are dropped (the limit is lowered to TRIM_LIMIT for a moment, then set back; statements issued
   * meanwhile wait). DuckDB keeps every block it has read or written cached up to its limit, and
   * frees them only when it needs the room: after a load, hundreds of MB stay resident while idle
   * (measured: 1.5M events inserted, RSS 497 MB idle, 288 MB after a trim; a full scan afterwards
   * brought 16 MB back). Off when 0 or absent.
   */
  idleTrimMs?: number
}

/** What the cache is cut to by an idle trim: above what DuckDB keeps pinned at rest (~30 MB measured). */
const TRIM_LIMIT = '32MB'

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
 */
const ROW_GROUP_SIZE = 16_384
const CHECKPOINT_THRESHOLD = '64MB'

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
  const trim = opts.memoryLimit && opts.idleTrimMs ? idleTrim(await instance.connect(), opts.memoryLimit, opts.idleTrimMs) : null
  if (trim) trim.track(connection)
  return {
    connection,
    async connect(o = {}) {
      const c = await open()
      others.push(c)
      if (!o.monitoring) trim?.track(c)
      return c
    },
    async close() {
      await trim?.stop()
      // A checkpoint folds the WAL into the main file so the next start opens quickly.
      await connection.run(`CHECKPOINT ${DATABASE}`)
      for (const c of others) c.closeSync()
      connection.closeSync()
      instance.closeSync()
    },
  }
}

/**
 * Drops DuckDB's cached blocks once no statement has run for `idleMs`: the statements of the
 * connections it tracks are counted, and a trim starts only when none is running and waits for
 * none (a statement issued during a trim starts after it, so none runs under the lowered limit).
 */
function idleTrim(own: DuckDBConnection, limit: string, idleMs: number) {
  let running = 0
  let lastActive = Date.now()
  let trimmedSince = false
  let trimming: Promise<void> | null = null

  async function around<T>(statement: () => Promise<T>): Promise<T> {
    while (trimming) await trimming
    running++
    try {
      return await statement()
    } finally {
      running--
      lastActive = Date.now()
      trimmedSince = false
    }
  }

  async function trimNow(): Promise<void> {
    try {
      await own.run(`SET memory_limit = '${TRIM_LIMIT}'`)
    } finally {
      // Whatever the first statement did, the configured limit must be back before anything runs.
      await own.run(`SET memory_limit = '${limit}'`)
    }
  }

  const timer = setInterval(() => {
    if (trimming || running > 0 || trimmedSince || Date.now() - lastActive < idleMs) return
    trimming = trimNow()
      // Lowering the limit can fail (more pinned than 32MB): nothing was dropped then. Setting it back
      // only fails with the database itself, which every statement would then report.
      .catch(() => undefined)
      .finally(() => {
        trimming = null
        trimmedSince = true
      })
  }, Math.max(50, Math.min(idleMs / 2, 5000)))
  timer.unref()

  return {
    /** Counts this connection's statements (run, runAndReadAll) as activity. */
    track(c: DuckDBConnection): void {
      const run = c.run.bind(c)
      const runAndReadAll = c.runAndReadAll.bind(c)
      c.run = (...args: Parameters<DuckDBConnection['run']>) => around(() => run(...args))
      c.runAndReadAll = (...args: Parameters<DuckDBConnection['runAndReadAll']>) => around(() => runAndReadAll(...args))
    },
    async stop(): Promise<void> {
      clearInterval(timer)
      await trimming
      own.closeSync()
    },
  }
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
