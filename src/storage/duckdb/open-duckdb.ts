import { createHash } from 'node:crypto'
import { mkdir, readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'

export interface DuckDb {
  instance: DuckDBInstance
  connection: DuckDBConnection
  close(): Promise<void>
}

/** Opens (creating if needed) the DuckDB file `file` (or `:memory:`) and applies its migrations. */
export async function openDuckDb(file: string, migrationsDir: string): Promise<DuckDb> {
  if (file !== ':memory:') await mkdir(path.dirname(file), { recursive: true })
  // Each automatic checkpoint recompresses the row group being filled, so at the default 16 MB of
  // WAL ingestion spent most of its time re-checkpointing the same rows (measured: INSERT throughput
  // x2-4 at 256 MB). The WAL is fsync'd on every commit either way; only replay after a crash and
  // the not-yet-checkpointed rows held in memory grow.
  const instance = await DuckDBInstance.create(file, { checkpoint_threshold: '256MB' })
  const connection = await instance.connect()
  await runDuckDbMigrations(connection, migrationsDir)
  return {
    instance,
    connection,
    async close() {
      // A checkpoint folds the WAL into the main file so the next start opens quickly.
      await connection.run('CHECKPOINT')
      connection.closeSync()
      instance.closeSync()
    },
  }
}

async function runDuckDbMigrations(c: DuckDBConnection, dir: string): Promise<void> {
  await c.run(`CREATE TABLE IF NOT EXISTS _migrations (name VARCHAR PRIMARY KEY, checksum VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`)
  const rows = (await c.runAndReadAll('SELECT name, checksum FROM _migrations')).getRowObjects()
  const applied = new Map(rows.map((r) => [String(r.name), String(r.checksum)]))
  for (const file of (await readdir(dir)).filter((f) => /^\d+.*\.sql$/.test(f)).sort()) {
    const sql = await readFile(path.join(dir, file), 'utf8')
    const checksum = createHash('sha256').update(sql).digest('hex')
    const seen = applied.get(file)
    if (seen !== undefined) {
      if (seen !== checksum) throw new Error(`migration ${file} changed after it was applied; migrations are forward-only`)
      continue
    }
    await c.run('BEGIN TRANSACTION')
    try {
      await c.run(sql)
      await c.run('INSERT INTO _migrations (name, checksum) VALUES ($1, $2)', [file, checksum])
      await c.run('COMMIT')
    } catch (err) {
      await c.run('ROLLBACK')
      throw err
    }
  }
}
