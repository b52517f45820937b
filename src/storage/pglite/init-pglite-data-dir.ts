import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { openPgliteSqlClient } from './pglite-sql-client.ts'
import { runMigrations } from '../sql/run-migrations.ts'

const SELF = fileURLToPath(import.meta.url)

/**
 * Creates and migrates a new PGlite data dir in a short-lived child process. initdb grows PGlite's
 * WASM heap to ~0.9 GB and a WASM heap never shrinks, so done in the server it would stay resident
 * for the server's life; a later open of the finished dir needs ~0.4 GB.
 */
export async function initPgliteDataDir(dataDir: string, migrationsDir: string): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv.filter((a) => !a.startsWith('--test')), SELF, dataDir, migrationsDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', resolve)
  })
  if (code !== 0) throw new Error(`initialising the metadata store in ${dataDir} failed (exit ${code}): ${stderr.trim()}`)
}

// Run as the child: node init-pglite-data-dir.ts <dataDir> <migrationsDir>
if (process.argv[1] === SELF) {
  const [dataDir, migrationsDir] = process.argv.slice(2)
  const db = await openPgliteSqlClient(dataDir!)
  await runMigrations(db, migrationsDir!)
  await db.close()
}
