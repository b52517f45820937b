import type { SqlClient } from './sql-client.ts'

/**
 * The metadata tables (every base table of the public schema but the migration record), parents before
 * children (foreign keys), so that loading them in this order satisfies every constraint.
 */
export async function metadataTables(db: SqlClient): Promise<string[]> {
  const tables = (await db.query<{ t: string }>(
    `SELECT table_name AS t FROM information_schema.tables
     WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_migrations' ORDER BY table_name`,
  )).map((r) => r.t)
  const edges = await db.query<{ child: string; parent: string }>(
    `SELECT DISTINCT tc.table_name AS child, ccu.table_name AS parent
     FROM information_schema.table_constraints tc
     JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name AND ccu.table_schema = tc.table_schema
     WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = 'public'`,
  )
  const parents = new Map(tables.map((t) => [t, new Set<string>()]))
  for (const e of edges) if (e.child !== e.parent) parents.get(e.child)?.add(e.parent)
  const ordered: string[] = []
  const placed = new Set<string>()
  while (ordered.length < tables.length) {
    const next = tables.filter((t) => !placed.has(t) && [...parents.get(t)!].every((p) => placed.has(p) || !parents.has(p)))
    if (next.length === 0) throw new Error(`foreign keys form a cycle among ${tables.filter((t) => !placed.has(t)).join(', ')}`)
    for (const t of next) {
      ordered.push(t)
      placed.add(t)
    }
  }
  return ordered
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

/** Every row of `table` as JSON object text (row_to_json: the same on PGlite and PostgreSQL). */
export async function readTableRows(db: SqlClient, table: string): Promise<string[]> {
  return (await db.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM ${quote(table)} t`)).map((r) => r.j)
}

/**
 * Replaces the contents of `tables` (in load order) by the given rows, in one transaction: emptied,
 * filled through json_populate_recordset (generated columns left to the database), then every sequence
 * owned by a column set past the column's largest value, so new rows get fresh ids.
 */
export async function loadTables(db: SqlClient, tables: ReadonlyArray<{ table: string; rows: readonly string[] }>): Promise<void> {
  await db.inTransaction(async (tx) => {
    if (tables.length > 0) await tx.exec(`TRUNCATE ${tables.map((t) => quote(t.table)).join(', ')} CASCADE`)
    for (const { table, rows } of tables) {
      const columns = (await tx.query<{ c: string }>(
        `SELECT column_name AS c FROM information_schema.columns
         WHERE table_schema = 'public' AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`,
        [table],
      )).map((r) => quote(r.c))
      for (let i = 0; i < rows.length; i += 1000) {
        await tx.query(
          `INSERT INTO ${quote(table)} (${columns.join(', ')}) OVERRIDING SYSTEM VALUE
           SELECT ${columns.join(', ')} FROM json_populate_recordset(NULL::${quote(table)}, $1::json)`,
          [`[${rows.slice(i, i + 1000).join(',')}]`],
        )
      }
      const sequences = await tx.query<{ c: string; s: string }>(
        `SELECT column_name AS c, pg_get_serial_sequence($1, column_name) AS s FROM information_schema.columns
         WHERE table_schema = 'public' AND table_name = $2 AND pg_get_serial_sequence($1, column_name) IS NOT NULL`,
        [quote(table), table],
      )
      for (const { c, s } of sequences) {
        await tx.query(`SELECT setval($1, coalesce((SELECT max(${quote(c)}) FROM ${quote(table)}), 0) + 1, false)`, [s])
      }
    }
  })
}
