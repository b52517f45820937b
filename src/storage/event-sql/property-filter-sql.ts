import { compileRegex } from '../../domain/properties/compile-regex.ts'
import { parseRustFloat } from '../../domain/properties/property-date.ts'
import type { PropertyFilter } from '../../domain/properties/property-filter.ts'
import { asciiLowercase, isTruthy, isTruthyOrFalsy, toPropertyString } from '../../domain/properties/property-string.ts'
import { SQL_OPERATORS } from '../../domain/query/sql-operators.ts'
import { dateFilterSql } from '../sql/date-filter-sql.ts'
import { semverFilterSql } from '../sql/semver-filter-sql.ts'
import { literal, type SqlParams } from './duckdb-action-elements-sql.ts'
import { duckDbValueDialect } from './duckdb-value-dialect.ts'
import { jsonPointer } from './materialized-properties.ts'

/**
 * Where a filter reads its value: `present` is a SQL boolean (the key exists), `text` the value's
 * string form as the domain's `toPropertyString` gives it (JSON null as `null`), read only when present.
 */
export interface ValueSource {
  present: string
  text: string
}

/**
 * A key of a JSON text column (`properties`, `person_properties`) as a value source. The key is
 * bound as a JSON pointer, on first use only: DuckDB refuses a statement with an unused parameter.
 */
export function jsonSource(column: string, key: string, params: SqlParams, materialized?: string): ValueSource {
  let pointer: string | undefined
  const bind = (): string => (pointer ??= params.add(jsonPointer(key)))
  // A materialized column holds json_extract_string's text of the key (NULL when absent or JSON
  // null): only telling those two apart reads the JSON.
  if (materialized) {
    return {
      get present() {
        return `(${materialized} IS NOT NULL OR COALESCE(json_exists(${column}, ${bind()}), FALSE))`
      },
      get text() {
        return `COALESCE(${materialized}, 'null')`
      },
    }
  }
  return {
    get present() {
      return `COALESCE(json_exists(${column}, ${bind()}), FALSE)`
    },
    get text() {
      return `COALESCE(json_extract_string(${column}, ${bind()}), 'null')`
    },
  }
}

/** Operators the SQL compiles: all of the domain matcher's but `in`, `not_in` and `flag_evaluates_to`. */
export const SQL_PROPERTY_OPERATORS = SQL_OPERATORS

const ASCII_LOWER = `'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'`
const RUST_F64 = '(?i)^[+-]?(?:(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)$'

/** `toNumber` of the domain: the text parsed as Rust parses an f64, NULL when it does not parse or is NaN. */
function numberSql(text: string): string {
  return `(CASE WHEN regexp_matches(${text}, ${literal(RUST_F64)}) AND NOT isnan(TRY_CAST(${text} AS DOUBLE)) THEN TRY_CAST(${text} AS DOUBLE) END)`
}

/** DuckDB's RE2 predates `(?<name>...)`; the same group written `(?P<name>...)` means the same. */
export function toDuckDbRegex(source: string): string {
  return source.replace(/(^|[^\\])((?:\\\\)*)\(\?<(?=[A-Za-z_])/g, '$1$2(?P<')
}

/**
 * A property filter as a SQL boolean with the semantics of the domain's `compilePropertyFilter`
 * (which the pure action matcher uses): a missing key passes only the negative operators, a null
 * filter value fails all but `is_set`/`is_not_set`, an invalid regex or number fails, unknown
 * operators fail. Exact and list comparisons are case-insensitive (DuckDB `lower`), the text
 * operators lower-case ASCII only. Known gaps (property values the agreement test does not
 * generate; each was checked to differ): a JSON object compares by its stored text (the domain sorts
 * keys); a JSON array is never "truthy" here (the domain reads `[true]` and `[]` as true); numbers
 * of 1e21 and more print as `1e21` (JS: `1e+21`); DuckDB's `lower` folds `İ` to `i` and never
 * uses the final sigma, where JS gives `i̇` and `ς`. Dates and versions are parsed as the domain does
 * (`storage/sql/date-filter-sql.ts`, `semver-filter-sql.ts`, with their own gaps listed there);
 * relative dates resolve at `now` (epoch ms), the caller's clock when it passes one.
 */
export function propertyFilterSql(filter: PropertyFilter, source: ValueSource, params: SqlParams, now: number = Date.now()): string {
  const op = filter.operator ?? 'exact'
  if (op === 'is_set') return source.present
  if (op === 'is_not_set') return `(NOT ${source.present})`
  const value = filter.value
  if (value === null || value === undefined) return 'FALSE'
  const positive = (cond: string): string => `(${source.present} AND COALESCE(${cond}, FALSE))`
  const negative = (cond: string): string => `(NOT ${source.present} OR NOT COALESCE(${cond}, FALSE))`
  switch (op) {
    case 'exact':
      return positive(exactSql(value, source.text, params))
    case 'is_not':
      return negative(exactSql(value, source.text, params))
    case 'icontains':
    case 'not_icontains':
    case 'starts_with':
    case 'not_starts_with':
    case 'ends_with':
    case 'not_ends_with': {
      const fn = op.endsWith('icontains') ? 'contains' : op.endsWith('starts_with') ? 'starts_with' : 'ends_with'
      const cond = `${fn}(translate(${source.text}, ${ASCII_LOWER}), ${params.add(asciiLowercase(toPropertyString(value)))})`
      return op.startsWith('not_') ? negative(cond) : positive(cond)
    }
    case 'icontains_multi':
    case 'not_icontains_multi': {
      const needles = (Array.isArray(value) ? value : [value]).map((v) => asciiLowercase(toPropertyString(v)))
      const lowered = `translate(${source.text}, ${ASCII_LOWER})`
      const cond = needles.length === 0 ? 'FALSE' : needles.map((n) => `contains(${lowered}, ${params.add(n)})`).join(' OR ')
      return op === 'icontains_multi' ? positive(cond) : negative(cond)
    }
    case 'regex':
    case 'not_regex': {
      const pattern = toPropertyString(value)
      if (compileRegex(pattern) === null) return op === 'regex' ? 'FALSE' : `(NOT ${source.present})`
      const cond = `regexp_matches(${source.text}, ${params.add(toDuckDbRegex(pattern))})`
      return op === 'regex' ? positive(cond) : negative(cond)
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const expected = toNumber(value)
      if (expected === undefined || Number.isNaN(expected)) return 'FALSE'
      const sign = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op]
      return positive(`${numberSql(source.text)} ${sign} ${params.add(expected)}::DOUBLE`)
    }
    case 'between':
    case 'not_between':
      return betweenSql(op, value, source, params)
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      return positive(dateFilterSql(op, value, source.text, duckDbValueDialect(params), now))
    default:
      return op.startsWith('semver_') ? positive(semverFilterSql(op, value, source.text, duckDbValueDialect(params))) : 'FALSE'
  }
}

function exactSql(value: unknown, text: string, params: SqlParams): string {
  if (isTruthyOrFalsy(value)) return `(lower(${text}) = 'true') = ${isTruthy(value) ? 'TRUE' : 'FALSE'}`
  const expected = (Array.isArray(value) ? value : [value]).map((v) => toPropertyString(v).toLowerCase())
  if (expected.length === 0) return 'FALSE'
  return `lower(${text}) IN (${expected.map((v) => params.add(v)).join(', ')})`
}

function toNumber(value: unknown): number | undefined {
  return typeof value === 'number' ? value : parseRustFloat(toPropertyString(value))
}

function betweenSql(op: string, value: unknown, source: ValueSource, params: SqlParams): string {
  if (!Array.isArray(value) || value.length !== 2) return 'FALSE'
  const low = toNumber(value[0])
  const high = toNumber(value[1])
  if (low === undefined || high === undefined || Number.isNaN(low) || Number.isNaN(high) || low > high) return 'FALSE'
  const n = numberSql(source.text)
  const inside = `${n} BETWEEN ${params.add(low)}::DOUBLE AND ${params.add(high)}::DOUBLE`
  if (op === 'between') return `(${source.present} AND COALESCE(${inside}, FALSE))`
  return `(NOT ${source.present} OR COALESCE(NOT (${inside}), FALSE))`
}
