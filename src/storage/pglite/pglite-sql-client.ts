import { mkdir } from 'node:fs/promises'
import { PGlite, type Transaction } from '@electric-sql/pglite'
import type { SqlClient } from '../sql/sql-client.ts'

export interface PgliteOptions {
  /**
   * PostgreSQL's `shared_buffers` (e.g. '32MB'); PGlite's default is PostgreSQL's 128MB, which costs
   * about 115 MB of resident memory once touched (measured: an opened data dir 280 MB RSS at 128MB,
   * 166 MB at 16MB). Pages outside it are re-read from the operating system's file cache.
   */
  sharedBuffers?: string
}

/** Opens (creating if needed) an embedded PostgreSQL in `dataDir`; `memory://` keeps it in RAM. */
export async function openPgliteSqlClient(dataDir: string, opts: PgliteOptions = {}): Promise<PgliteSqlClient> {
  if (!dataDir.startsWith('memory://')) await mkdir(dataDir, { recursive: true })
  const db = await PGlite.create(dataDir, {
    // `startParams` replaces PGlite's defaults, so they are repeated first.
    ...(opts.sharedBuffers ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${opts.sharedBuffers}`] } : {}),
  })
  return {
    ...wrap(db, async () => db.close()),
    // PostgreSQL's whole address space is the WebAssembly memory: it only grows.
    memoryBytes: () => db.Module.HEAPU8.byteLength,
  }
}

export interface PgliteSqlClient extends SqlClient {
  /** Bytes of the WebAssembly memory the embedded PostgreSQL runs in. */
  memoryBytes(): number
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
