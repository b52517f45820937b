/** A SQL expression put into a statement as written (`now()`): only ever a constant of the code, never a value. */
export class SqlExpr {
  constructor(readonly sql: string) {}
}

/**
 * `SET a = $n, b = now(), ...` from the entries that are not undefined, the one way the SQL stores
 * build a partial UPDATE. Values become parameters numbered after the `offset` parameters the
 * statement already has; `SqlExpr` values are written as they are.
 */
export function setClause(fields: Record<string, unknown>, offset: number): { sql: string; params: unknown[] } {
  const params: unknown[] = []
  const parts: string[] = []
  for (const [column, value] of Object.entries(fields)) {
    if (value === undefined) continue
    parts.push(`${column} = ${value instanceof SqlExpr ? value.sql : `$${offset + params.push(value)}`}`)
  }
  return { sql: parts.join(', '), params }
}
