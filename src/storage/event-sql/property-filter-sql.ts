import { compileRegex } from '../../domain/properties/compile-regex.ts'
import { parseRustFloat } from '../../domain/properties/property-date.ts'
import type { PropertyFilter } from '../../domain/properties/property-filter.ts'
import { asciiLowercase, isTruthy, isTruthyOrFalsy, toPropertyString } from '../../domain/properties/property-string.ts'
import { assertNever, EVENT_SQL_OPERATORS, isPropertyOperator } from '../../domain/properties/property-operators.ts'
import { dateFilterSql } from '../sql/date-filter-sql.ts'
import { semverFilterSql } from '../sql/semver-filter-sql.ts'
import type { EventDialect, ValueSource } from './event-dialect.ts'
import type { SqlParams } from './sql-params.ts'

export type { ValueSource } from './event-dialect.ts'

/** Operators the SQL compiles: all of the domain matcher's but `in`, `not_in` and `flag_evaluates_to`. */
export const SQL_PROPERTY_OPERATORS = EVENT_SQL_OPERATORS

// Case spelt out, not `(?i)`: ClickHouse 18.16 prefilters a pattern's literal text case-sensitively.
const RUST_F64 = '^[+-]?(?:(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN])$'

/** `toNumber` of the domain: the text parsed as Rust parses an f64, NULL when it does not parse or is NaN. */
function numberSql(text: string, d: EventDialect): string {
  const n = d.tryDouble(text)
  return `(CASE WHEN ${d.regexMatch(text, d.constant(RUST_F64))} AND NOT ${d.isNaN(n)} THEN ${n} END)`
}

/**
 * A property filter as a SQL boolean with the semantics of the domain's `compilePropertyFilter`
 * (which the pure action matcher uses): a missing key passes only the negative operators, a null
 * filter value fails all but `is_set`/`is_not_set`, an invalid regex or number fails, unknown
 * operators fail. Exact and list comparisons are case-insensitive (the engine's `lower`), the text
 * operators lower-case ASCII only and match literally (`%` and `_` are plain characters). Known gaps
 * (property values the agreement test does not generate; each was checked to differ on DuckDB): a
 * JSON object compares by its stored text (the domain sorts keys); a JSON array is never "truthy"
 * here (the domain reads `[true]` and `[]` as true); numbers of 1e21 and more print as `1e21` (JS:
 * `1e+21`); DuckDB's `lower` folds `İ` to `i` and never uses the final sigma, where JS gives `i̇` and
 * `ς`. Dates and versions are parsed as the domain does (`storage/sql/date-filter-sql.ts`,
 * `semver-filter-sql.ts`, with their own gaps listed there); relative dates resolve at `now` (epoch
 * ms), the caller's clock when it passes one.
 */
export function propertyFilterSql(filter: PropertyFilter, source: ValueSource, d: EventDialect, params: SqlParams, now: number = Date.now()): string {
  const op = filter.operator ?? 'exact'
  // An operator outside the table matches nothing (as in the domain).
  if (!isPropertyOperator(op)) return d.bool(false)
  if (op === 'is_set') return source.present
  if (op === 'is_not_set') return `(NOT ${source.present})`
  const value = filter.value
  if (value === null || value === undefined) return d.bool(false)
  const positive = (cond: string): string => `(${source.present} AND COALESCE(${cond}, ${d.bool(false)}))`
  const negative = (cond: string): string => `(NOT ${source.present} OR NOT COALESCE(${cond}, ${d.bool(false)}))`
  switch (op) {
    case 'exact':
      return positive(exactSql(value, source.text, d, params))
    case 'is_not':
      return negative(exactSql(value, source.text, d, params))
    case 'icontains':
    case 'not_icontains':
    case 'starts_with':
    case 'not_starts_with':
    case 'ends_with':
    case 'not_ends_with': {
      const fn = op.endsWith('icontains') ? d.contains : op.endsWith('starts_with') ? d.startsWith : d.endsWith
      const cond = fn.call(d, d.asciiLower(source.text), params.add(asciiLowercase(toPropertyString(value))))
      return op.startsWith('not_') ? negative(cond) : positive(cond)
    }
    case 'icontains_multi':
    case 'not_icontains_multi': {
      const needles = (Array.isArray(value) ? value : [value]).map((v) => asciiLowercase(toPropertyString(v)))
      const lowered = d.asciiLower(source.text)
      const cond = needles.length === 0 ? d.bool(false) : needles.map((n) => d.contains(lowered, params.add(n))).join(' OR ')
      return op === 'icontains_multi' ? positive(cond) : negative(cond)
    }
    case 'regex':
    case 'not_regex': {
      const pattern = toPropertyString(value)
      if (compileRegex(pattern) === null) return op === 'regex' ? d.bool(false) : `(NOT ${source.present})`
      const cond = d.regexMatch(source.text, params.add(d.regexSource(pattern)))
      return op === 'regex' ? positive(cond) : negative(cond)
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const expected = toNumber(value)
      if (expected === undefined || Number.isNaN(expected)) return d.bool(false)
      const sign = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op]
      return positive(`${numberSql(source.text, d)} ${sign} ${d.double(expected, params)}`)
    }
    case 'between':
    case 'not_between':
      return betweenSql(op, value, source, d, params)
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      return positive(dateFilterSql(op, value, source.text, d.values(params), now))
    case 'semver_eq':
    case 'semver_neq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
    case 'semver_tilde':
    case 'semver_caret':
    case 'semver_wildcard':
      return positive(semverFilterSql(op, value, source.text, d.values(params)))
    case 'in':
    case 'not_in':
    case 'flag_evaluates_to':
      // Cohorts are expanded by the query before SQL (filter-expr.ts); flags never reach events.
      return d.bool(false)
    default:
      return assertNever(op)
  }
}

function exactSql(value: unknown, text: string, d: EventDialect, params: SqlParams): string {
  if (isTruthyOrFalsy(value)) return `(${d.lower(text)} = 'true') = ${d.bool(isTruthy(value))}`
  const expected = (Array.isArray(value) ? value : [value]).map((v) => toPropertyString(v).toLowerCase())
  if (expected.length === 0) return d.bool(false)
  return `${d.lower(text)} IN (${expected.map((v) => params.add(v)).join(', ')})`
}

function toNumber(value: unknown): number | undefined {
  return typeof value === 'number' ? value : parseRustFloat(toPropertyString(value))
}

function betweenSql(op: string, value: unknown, source: ValueSource, d: EventDialect, params: SqlParams): string {
  if (!Array.isArray(value) || value.length !== 2) return d.bool(false)
  const low = toNumber(value[0])
  const high = toNumber(value[1])
  if (low === undefined || high === undefined || Number.isNaN(low) || Number.isNaN(high) || low > high) return d.bool(false)
  const n = numberSql(source.text, d)
  const inside = `${n} BETWEEN ${d.double(low, params)} AND ${d.double(high, params)}`
  if (op === 'between') return `(${source.present} AND COALESCE(${inside}, ${d.bool(false)}))`
  return `(NOT ${source.present} OR COALESCE(NOT (${inside}), ${d.bool(false)}))`
}
