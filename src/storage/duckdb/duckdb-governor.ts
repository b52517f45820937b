import type { DuckDBConnection } from '@duckdb/node-api'
import type { DuckDbThreadPriority } from './duckdb-thread-priority.ts'

/** What the cache is cut to by an idle trim: above what DuckDB keeps pinned at rest (~30 MB measured). */
const TRIM_LIMIT = '32MB'

/** How long after the last query the limit stays at `memoryLimit`: a dashboard's queries come in bursts. */
export const READ_GRACE_MS = 15_000

export interface GovernorOptions {
  /** The attached database a trim checkpoints. */
  database: string
  /** Idle time before the cached blocks are dropped (0: never). */
  idleTrimMs?: number
  /** How long after the last query the read mode stays (default READ_GRACE_MS). */
  readGraceMs?: number
  /** Lowers the priority of the threads a `SET threads` starts (duckdb-thread-priority.ts). */
  priority?: DuckDbThreadPriority
}

/** The settings the governor changes: DuckDB's memory limit (null: not governed) and threads. */
export interface Mode {
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
export function createDuckDbGovernor(own: DuckDBConnection, read: Mode, write: Mode, opts: GovernorOptions) {
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
      const set = () => own.run(`SET threads = ${m.threads}`)
      await (opts.priority ? opts.priority.around(set) : set())
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
      await own.run(`CHECKPOINT ${opts.database}`)
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
