import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
/** What the runner needs of a database: a SqlClient has it, and so does open-duckdb's wrapper. */
export interface MigrationTarget {
  query<R = Record<string, any>>(sql: string, params?: unknown[]): Promise<R[]>
  exec(sql: string): Promise<void>
  inTransaction<T>(fn: (tx: MigrationTarget) => Promise<T>): Promise<T>
}

/**
 * Applies the numbered `.sql` files of `dir` that are not yet recorded in `_migrations`, in order,
 * all in one transaction (or, with `transactionPerFile`, each in its own: DuckDB cannot alter a
 * table that an earlier statement of the same transaction updated). Refuses to start if an applied
 * file's checksum changed.
 */
export async function runMigrations(
  db: MigrationTarget,
  dir: string,
  opts: { lockSql?: string | null; transactionPerFile?: boolean } = {},
): Promise<string[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS _migrations (
    name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`)
  const files = (await readdir(dir)).filter((f) => /^\d+.*\.sql$/.test(f)).sort()
  if (opts.transactionPerFile) {
    const ran: string[] = []
    for (const file of files) ran.push(...(await db.inTransaction((tx) => applyPending(tx, dir, [file]))))
    return ran
  }
  // (The same runner applies DuckDB's event-store migrations, without the PostgreSQL lock.)
  // One transaction under an advisory lock: several nodes starting at once on one PostgreSQL
  // apply each migration exactly once.
  return db.inTransaction(async (tx) => {
    const lockSql = opts.lockSql === undefined ? 'SELECT pg_advisory_xact_lock(727001)' : opts.lockSql
    if (lockSql) await tx.query(lockSql)
    return applyPending(tx, dir, files)
  })
}

/** Runs those of `files` not yet applied (checking the applied ones' checksums) and records them. */
async function applyPending(tx: MigrationTarget, dir: string, files: readonly string[]): Promise<string[]> {
  const applied = new Map(
    (await tx.query<{ name: string; checksum: string }>('SELECT name, checksum FROM _migrations')).map((r) => [r.name, r.checksum]),
  )
  const ran: string[] = []
  for (const file of files) {
    const sql = await readFile(path.join(dir, file), 'utf8')
    const checksum = createHash('sha256').update(sql).digest('hex')
    const seen = applied.get(file)
    if (seen !== undefined) {
      if (seen !== checksum) throw new Error(`migration ${file} changed after it was applied; migrations are forward-only`)
      continue
    }
    await tx.exec(sql)
    await tx.query('INSERT INTO _migrations (name, checksum) VALUES ($1, $2)', [file, checksum])
    ran.push(file)
  }
  return ran
}
