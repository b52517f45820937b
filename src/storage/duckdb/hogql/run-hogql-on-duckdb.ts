import type { HogQLSelect } from '../../../domain/hogql/hogql-ast.ts'
import { hogqlError } from '../../../domain/hogql/hogql-error.ts'
import type { HogQLRows, QueryRows, RunGuards } from '../../../modules/query/query-engine.ts'
import { AppError } from '../../../shared/errors.ts'
import { translateHogQL } from './translate-hogql.ts'

type RunSql = (sql: string, values: readonly (string | number | boolean | null)[], guards: RunGuards) => Promise<QueryRows>

// DuckDB's errors about the statement itself (types that do not convert, an aggregate inside an
// aggregate, a column not grouped): the client's query is wrong, so a 400 that says why.
const QUERY_ERRORS = /^(Conversion|Binder|Invalid Input|Out of Range|Not implemented|Parser|Catalog) Error/

/**
 * Translates a parsed HogQL SELECT for DuckDB and runs it under the guards. Rows come back keyed
 * `c0`, `c1`... with HogQL's column names beside them.
 */
export async function runHogQLOnDuckDb(runSql: RunSql, projectId: number, query: HogQLSelect, opts: { timeZone: string; now: Date }, guards: RunGuards): Promise<HogQLRows> {
  const t = translateHogQL(query, { projectId, timeZone: opts.timeZone, now: opts.now })
  try {
    const rows = await runSql(t.sql, t.values, guards)
    return { ...rows, hogqlColumns: t.columns, sql: t.sql }
  } catch (err) {
    if (err instanceof AppError) throw err
    const message = err instanceof Error ? err.message : String(err)
    if (QUERY_ERRORS.test(message)) throw hogqlError(`The query cannot run: ${message.split('\n')[0]}`)
    throw err
  }
}
