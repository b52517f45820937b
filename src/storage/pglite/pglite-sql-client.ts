import { mkdir } from 'node:fs/promises'
import { PGlite, type Transaction } from '@electric-sql/pglite'
import type { SqlClient } from '../sql/sql-client.ts'

/**
 * Opens (creating if needed) an embedded PostgreSQL in `dataDir`; `memory://` keeps it in RAM.
 * `template` is a data-dir dump to start a new database from (skips initdb: used by tests).
 */
export async function openPgliteSqlClient(dataDir: string, template?: Blob): Promise<PgliteSqlClient> {
  if (!dataDir.startsWith('memory://')) await mkdir(dataDir, { recursive: true })
  const db = await PGlite.create(dataDir, template ? { loadDataDir: template } : {})
  return { ...wrap(db, async () => db.close()), dump: async () => db.dumpDataDir('none') }
}

export interface PgliteSqlClient extends SqlClient {
  /** The whole data dir as an uncompressed tarball. */
  dump(): Promise<Blob>
}

function wrap(db: PGlite | Transaction, close: () => Promise<void>): SqlClient {
  const client: SqlClient = {
    async query<R>(sql: string, params?: unknown[]) {
      return (await db.query<R>(sql, params)).rows
    },
    async exec(sql: string) {
      await db.exec(sql)
    },
    async inTransaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
      if (!('transaction' in db)) return fn(client) // already inside one: PGlite has no nested transactions
      return db.transaction((tx) => fn(wrap(tx, async () => {})))
    },
    close,
  }
  return client
}
