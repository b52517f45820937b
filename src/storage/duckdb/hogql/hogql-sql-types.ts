import type { HogQLSelect } from '../../../domain/hogql/hogql-ast.ts'
import type { SqlParams } from '../../event-sql/sql-params.ts'

/**
 * What the translator knows of an expression's type, enough to pick DuckDB's conversions:
 * `json` is a property's text (a string that compares as a number beside a number), `datetime` a
 * TIMESTAMPTZ, `date` a DATE in the project's zone.
 */
export type HType = 'string' | 'number' | 'bool' | 'datetime' | 'date' | 'json' | 'null' | 'interval' | 'unknown'

export interface Typed {
  sql: string
  type: HType
  /** The value of a string constant (for reading it as a time in the project's zone). */
  text?: string
  /** An interval of days or longer (moves on the wall clock) rather than of hours or less. */
  calendar?: boolean
}

/** Bound values, one placeholder per distinct value: the same expression reads as the same SQL (GROUP BY matches SELECT). */
export function createDedupedParams(): SqlParams {
  const values: (string | number | boolean)[] = []
  const seen = new Map<string, string>()
  return {
    values,
    add(value) {
      const key = `${typeof value}:${String(value)}`
      let placeholder = seen.get(key)
      if (!placeholder) {
        values.push(value)
        placeholder = `$${values.length}`
        seen.set(key, placeholder)
      }
      return placeholder
    },
  }
}

/** What expressions need from the query around them. */
export interface ExprScope {
  params: SqlParams
  /** The project's zone (IANA), for times read and written as PostHog does. */
  timeZone: string
  now: Date
  /** A field of the tables (or select aliases) in scope. */
  field(chain: readonly string[]): Typed
  /** A nested SELECT (IN, scalar subquery) with its first column's type. */
  subquery(query: HogQLSelect): Typed
}

/** A constant of ours (never client text) as a SQL string literal. */
export const sqlString = (s: string): string => `'${s.replace(/'/g, "''")}'`

/** An identifier of ours or a client's alias, quoted. */
export const sqlName = (s: string): string => `"${s.replace(/"/g, '""')}"`

/** A string value as a number (NULL when not one), as ClickHouse's toFloatOrNull. */
export const asNumber = (t: Typed): string => (t.type === 'number' || t.type === 'null' ? t.sql : t.type === 'bool' ? `CAST(${t.sql} AS INTEGER)` : `TRY_CAST(${t.sql} AS DOUBLE)`)

/** Any value as text; times as the project's wall clock (`2024-06-01 12:00:00`), as ClickHouse's toString. */
export function asText(t: Typed, scope: ExprScope): string {
  if (t.type === 'string' || t.type === 'json') return t.sql
  if (t.type === 'datetime') return `strftime(timezone(${scope.params.add(scope.timeZone)}, ${t.sql}), '%Y-%m-%d %H:%M:%S')`
  return `CAST(${t.sql} AS VARCHAR)`
}

/** A value as an instant: strings are wall-clock times of the project's zone unless they carry an offset. */
export function asDateTime(t: Typed, scope: ExprScope): string {
  if (t.type === 'datetime' || t.type === 'null') return t.sql
  const tz = scope.params.add(scope.timeZone)
  if (t.type === 'date') return `timezone(${tz}, CAST(${t.sql} AS TIMESTAMP))`
  if (t.type === 'number') return `to_timestamp(${t.sql})`
  if (t.text !== undefined && /(?:Z|[+-]\d\d:?\d\d)$/i.test(t.text.trim())) return `CAST(${t.sql} AS TIMESTAMPTZ)`
  return `timezone(${tz}, TRY_CAST(${t.sql} AS TIMESTAMP))`
}

/** A value as a date in the project's zone. */
export function asDate(t: Typed, scope: ExprScope): string {
  if (t.type === 'date' || t.type === 'null') return t.sql
  if (t.type === 'datetime') return `CAST(timezone(${scope.params.add(scope.timeZone)}, ${t.sql}) AS DATE)`
  return `TRY_CAST(${t.sql} AS DATE)`
}
