/**
 * The one thing every SQL-backed MetaStore adapter needs from its driver. PGlite (embedded) and `pg`
 * (PostgreSQL at scale) both implement it, so the stores in `storage/sql/` run unchanged on either.
 */
export interface SqlClient {
  query<R = Record<string, any>>(sql: string, params?: unknown[]): Promise<R[]>
  /** Runs several statements separated by `;` (migrations); no parameters. */
  exec(sql: string): Promise<void>
  /** Runs `fn` inside one transaction: committed if it resolves, rolled back if it throws. */
  inTransaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>
  close(): Promise<void>
}
