import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import type { SqlClient } from './sql-client.ts'

/**
 * Applies the numbered `.sql` files of `dir` that are not yet recorded in `_migrations`, in order,
 * all in one transaction. Refuses to start if an applied file's checksum changed.
 */
export async function runMigrations(db: SqlClient, dir: string): Promise<string[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS _migrations (
    name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`)
  // One transaction under an advisory lock: several nodes starting at once on one PostgreSQL
  // apply each migration exactly once.
  return db.inTransaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(727001)')
    const applied = new Map(
      (await tx.query<{ name: string; checksum: string }>('SELECT name, checksum FROM _migrations')).map((r) => [r.name, r.checksum]),
    )
    const files = (await readdir(dir)).filter((f) => /^\d+.*\.sql$/.test(f)).sort()
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
  })
}
