import type { Page } from '../../shared/page.ts'
import type { SqlClient } from './sql-client.ts'

/**
 * One page of a list and how many rows match, the one way the SQL stores page (PostHog's
 * `{count, results}`): `count(*)` over `from` (a table and its alias, e.g. `actions a`) and the rows
 * of `select` (a `SELECT ... FROM` with the same alias and any joins), both filtered by `where`, whose
 * parameters are `params`; `LIMIT`/`OFFSET` are bound after them.
 */
export async function selectPage<T>(
  db: SqlClient,
  q: { from: string; select: string; where: string; params: readonly unknown[]; orderBy: string; page: Page; map: (row: Record<string, any>) => T },
): Promise<{ count: number; rows: T[] }> {
  const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${q.from} WHERE ${q.where}`, [...q.params])
  const at = q.params.length
  const rows = await db.query<Record<string, any>>(`${q.select} WHERE ${q.where} ORDER BY ${q.orderBy} LIMIT $${at + 1} OFFSET $${at + 2}`, [
    ...q.params,
    q.page.limit,
    q.page.offset,
  ])
  return { count: Number(n), rows: rows.map(q.map) }
}
