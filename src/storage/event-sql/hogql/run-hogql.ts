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
    const hogqlTypes = rows.types.map((engineType, i) => dialect.typeName(engineType, t.types[i] ?? 'unknown', opts.timeZone))
    return { ...rows, hogqlColumns: t.columns, hogqlTypes, sql: t.sql }
  } catch (err) {
    if (err instanceof AppError) throw err
    if (dialect.isQueryError(err)) throw hogqlError(`The query cannot run: ${firstLine(err)}`)
    throw err
  }
}

function firstLine(err: unknown): string {
  const m = err instanceof Error ? err.message : String(err)
  return m.split('\n')[0]!.replace(/\s*\(version [^)]*\)\s*$/, '').replace(/, e\.what\(\) = DB::Exception$/, '').slice(0, 300)
}
