import type { HogQLSelect } from '../../domain/hogql/hogql-ast.ts'
import { parseHogQL } from '../../domain/hogql/parse-hogql.ts'
import { printSelect } from '../../domain/hogql/print-hogql.ts'
import { formatInZone } from '../../domain/query/zoned-time.ts'
import { validationError } from '../../shared/errors.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'

/** PostHog's rows for a query without LIMIT, and the most any LIMIT may ask for (`posthog/hogql/constants.py`). */
export const HOGQL_DEFAULT_LIMIT = 100
export const HOGQL_MAX_LIMIT = 50_000

/**
 * `HogQLQuery`: SQL in PostHog's dialect, parsed into a tree (anything outside the supported SELECT
 * subset is a 400 naming it) and translated by the event store, which adds the project filter to
 * every table read. Answers PostHog's `results`, `columns`, `types` and the normalised `hogql`.
 */
export async function runHogQLQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  if (typeof node.query !== 'string' || node.query.trim() === '') throw validationError('query.query', 'This field is required: the HogQL SELECT to run.', 'required')
  const values = node.values ?? {}
  if (typeof values !== 'object' || values === null || Array.isArray(values)) throw validationError('query.values', 'Expected an object of placeholder values.', 'invalid_input')
  if (node.filters !== undefined && node.filters !== null && Object.keys(node.filters as object).length > 0) {
    throw validationError('query.filters', 'HogQLQuery filters ({filters} placeholders) are not supported: write the conditions in WHERE.', 'invalid_input')
  }
  const parsed = parseHogQL(node.query, values as Record<string, unknown>)
  const limit = Math.min(parsed.limit ?? HOGQL_DEFAULT_LIMIT, HOGQL_MAX_LIMIT)
  const query: HogQLSelect = { ...parsed, limit }
  const rows = await ctx.engine.runHogQL(ctx.project.id, query, { timeZone: ctx.timeZone, now: ctx.now }, ctx.guards)
  const cell = (v: unknown, type: string): unknown => {
    if (v instanceof Date) return type === 'Date' || type === 'Nullable(Date)' ? v.toISOString().slice(0, 10) : formatInZone(v, ctx.timeZone)
    return v ?? null
  }
  const results = rows.rows.map((r) => rows.columns.map((c, i) => cell(r[c], rows.hogqlTypes[i]!)))
  const types = rows.hogqlTypes.map((t, i) => [rows.hogqlColumns[i], t])
  return {
    results,
    columns: rows.hogqlColumns,
    types,
    hogql: printSelect(query),
    query: node.query,
    sql: rows.sql,
    limit,
    offset: parsed.offset ?? 0,
  }
}
