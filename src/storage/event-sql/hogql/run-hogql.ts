import type { HogQLSelect } from '../../../domain/hogql/hogql-ast.ts'
import { hogqlError } from '../../../domain/hogql/hogql-error.ts'
import type { HogQLRows, QueryRows, RunGuards } from '../../../modules/query/query-engine.ts'
import { AppError } from '../../../shared/errors.ts'
import type { HogQLDialect } from './hogql-dialect.ts'
import { translateHogQL } from './translate-hogql.ts'

type RunSql = (sql: string, values: readonly (string | number | boolean | null)[], guards: RunGuards) => Promise<QueryRows>

/**
 * Translates a parsed HogQL SELECT with the engine's dialect and runs it under the guards (the
 * engine's `runSql`: read-only where the engine has such a mode). Rows come back keyed `c0`, `c1`...
 * with HogQL's column names and PostHog's type names beside them. An error the engine raises about
 * the statement itself (types that do not convert, an aggregate inside an aggregate, a column not
 * grouped) is the client's: a 400 that says why.
 */
export async function runHogQL(dialect: HogQLDialect, runSql: RunSql, projectId: number, query: HogQLSelect, opts: { timeZone: string; now: Date }, guards: RunGuards): Promise<HogQLRows> {
  const t = translateHogQL(query, dialect, { projectId, timeZone: opts.timeZone, now: opts.now })
  try {
    const rows = await runSql(t.sql, t.values, guards)
    // Truth values as booleans whatever the engine gives (ClickHouse 18.16: UInt8 1/0).
    t.types.forEach((type, i) => {
      const column = rows.columns[i]
      if (type !== 'bool' || column === undefined) return
      for (const row of rows.rows) if (row[column] !== null && row[column] !== undefined) row[column] = row[column] === true || Number(row[column]) === 1
    })
    const hogqlTypes = rows.types.map((engineType, i) => dialect.typeName(engineType, t.types[i] ?? 'unknown', opts.timeZone))
    return { ...rows, hogqlColumns: t.columns, hogqlTypes, sql: t.sql }
  } catch (err) {
    if (err instanceof AppError) throw err
    const detail = dialect.queryErrorDetail(err)
    if (detail !== null) throw hogqlError(`The query cannot run: ${detail}`)
    throw err
  }
}
