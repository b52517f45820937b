import pg from 'pg'
import type { SqlClient } from '../sql/sql-client.ts'

// Return int8/numeric as JS numbers (ids and counts fit), timestamps as Date, like PGlite does.
pg.types.setTypeParser(20, (v) => Number(v))

/** A SqlClient on a PostgreSQL server (the MetaStore at scale): same SQL and migrations as PGlite. */
export function openPostgresSqlClient(url: string, opts: { poolSize?: number; statementTimeoutMs?: number } = {}): SqlClient {
  const statementTimeout = opts.statementTimeoutMs ?? 30_000
  // A server that does not answer fails a request (a 503) instead of holding it forever: 5 s to
  // connect, `statementTimeoutMs` for a statement on the server (and 5 s more for its answer to
  // arrive), and a transaction left idle is ended by the server after 60 s.
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 10,
    connectionTimeoutMillis: 5000,
    statement_timeout: statementTimeout,
    query_timeout: statementTimeout + 5000,
    idle_in_transaction_session_timeout: 60_000,
    // No JIT: it pays off for long analytic queries, not for these. The persons step's look-up of a
    // large micro-batch's distinct ids crosses jit_above_cost; with 12,000 ids over 1M persons
    // PostgreSQL 15 spent 550 ms on it with JIT and 194 ms without (EXPLAIN ANALYZE on this machine).
    options: '-c jit=off',
  })
  pool.on('error', () => {}) // an idle client's error is reported on its next query
  const over = (q: { query: pg.Pool['query'] }): Omit<SqlClient, 'inTransaction' | 'close'> => ({
    async query<R>(sql: string, params?: unknown[]) {
      return (await q.query(sql, params as unknown[])).rows as R[]
    },
    async exec(sql: string) {
      await q.query(sql)
    },
  })
  return {
    ...over(pool),
    async inTransaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
      const conn = await pool.connect()
      // A checked-out client whose server connection dies emits 'error' (the pool listens only to
      // idle ones): without a listener that is an uncaught exception. The failure reaches the caller
      // through the next query's rejection instead.
      const ignore = () => {}
      conn.on('error', ignore)
      const tx: SqlClient = {
        ...over(conn as unknown as { query: pg.Pool['query'] }),
        inTransaction: (inner) => inner(tx),
        close: async () => {},
      }
      let result: T
      try {
        await conn.query('BEGIN')
        result = await fn(tx)
        await conn.query('COMMIT')
      } catch (err) {
        // A connection that cannot even roll back is broken: destroy it rather than pool it again.
        const broken = await conn.query('ROLLBACK').then(() => undefined, (rollbackErr: Error) => rollbackErr)
        conn.off('error', ignore)
        conn.release(broken)
        throw err
      }
      conn.off('error', ignore)
      conn.release()
      return result
    },
    async close() {
      await pool.end()
    },
  }
}
