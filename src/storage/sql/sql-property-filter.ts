import type { PropertyFilter } from '../../domain/properties/property-filter.ts'
import { assertNever, isPropertyOperator, type PropertyOperator } from '../../domain/properties/property-operators.ts'
import { parseRustFloat } from '../../domain/properties/property-date.ts'
import { asciiLowercase, isTruthy, isTruthyOrFalsy, toPropertyString } from '../../domain/properties/property-string.ts'
import { AppError } from '../../shared/errors.ts'
import { dateFilterSql } from './date-filter-sql.ts'
import { pgValueDialect } from './pg-value-dialect.ts'
import { semverFilterSql } from './semver-filter-sql.ts'
import { toPgText } from './sql-text.ts'


/** Bound parameters of one statement: `add` returns the `$n` placeholder of a new value. */
export interface PgParams {
  values: unknown[]
  add(value: unknown): string
}

export function pgParams(initial: readonly unknown[] = []): PgParams {
  const values = [...initial]
  return { values, add: (v) => (values.push(v), `$${values.length}`) }
}

const ASCII_LOWER = `'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'`
// Rust's f64 parse of a string, bounded so the cast can never overflow (what Rust reads as inf is unmatched).
const NUMERIC_TEXT = `'^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]{1,2})?$'`

/**
 * One person-property filter as a SQL condition on the JSONB column `column`, with the semantics of
 * the domain's `compilePropertyFilter` (domain/properties/match-property.ts): an absent key fails
 * every operator but the negative ones; a null filter value fails everything but `is_set`/`is_not_set`;
 * string forms as `toPropertyString` gives them; `contains`/`starts`/`ends` compare ASCII-lower-cased;
 * `exact` against true/false compares truthiness. Values are bound. Throws `not_implemented` for an
 * operator outside `PERSON_SQL_OPERATORS` (the route refuses those first). Regexes run with `~` (see toPgRegex).
 * Dates and versions are parsed as the domain does (`date-filter-sql.ts`, `semver-filter-sql.ts`);
 * relative dates resolve at `now` (epoch ms).
 */
export function propertyFilterSql(column: string, filter: PropertyFilter, params: PgParams, now: number = Date.now()): string {
  const operator = filter.operator ?? 'exact'
  const value = filter.value
  // Checked before the key is bound: PostgreSQL refuses a statement with an unused parameter.
  if (operator !== 'is_set' && operator !== 'is_not_set' && (value === null || value === undefined)) return 'FALSE'
  const key = `${params.add(toPgText(filter.key))}::text`
  const present = `(${column} ? ${key})`
  const raw = `(${column} -> ${key})`
  const text = `(CASE jsonb_typeof(${raw}) WHEN 'string' THEN ${raw} #>> '{}' ELSE ${raw}::text END)`
  if (operator === 'is_set') return present
  if (operator === 'is_not_set') return `NOT ${present}`
  if (!isPropertyOperator(operator)) throw new AppError('not_implemented', `The property operator "${operator}" is not supported on persons yet.`)
  const negative = operator === 'is_not' || operator.startsWith('not_')
  const test = valueTest(operator, value, { raw, text }, params, now)
  return negative ? `(NOT ${present} OR NOT COALESCE(${test}, FALSE))` : `(${present} AND COALESCE(${test}, FALSE))`
}

/** The positive test of an operator on a present value (the caller negates `not_*` and `is_not`). */
function valueTest(operator: PropertyOperator, value: unknown, v: { raw: string; text: string }, params: PgParams, now: number): string {
  switch (operator) {
    case 'exact':
    case 'is_not':
      return exactSql(value, v.text, params)
    case 'icontains':
    case 'not_icontains':
    case 'starts_with':
    case 'not_starts_with':
    case 'ends_with':
    case 'not_ends_with': {
      const needle = params.add(toPgText(asciiLowercase(toPropertyString(value))))
      const hay = `translate(${v.text}, ${ASCII_LOWER})`
      if (operator.endsWith('icontains')) return `(strpos(${hay}, ${needle}) > 0)`
      if (operator.endsWith('starts_with')) return `(left(${hay}, length(${needle})) = ${needle})`
      return `(right(${hay}, length(${needle})) = ${needle})`
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const expected = toNumber(value)
      if (expected === undefined || Number.isNaN(expected)) return 'FALSE'
      const sign = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[operator]
      return `(${numberSql(v.raw)} ${sign} ${params.add(expected)}::float8)`
    }
    case 'between':
    case 'not_between': {
      if (!Array.isArray(value) || value.length !== 2) return operator === 'between' ? 'FALSE' : 'TRUE'
      const [low, high] = [toNumber(value[0]), toNumber(value[1])]
      if (low === undefined || high === undefined || Number.isNaN(low) || Number.isNaN(high) || low > high) {
        return operator === 'between' ? 'FALSE' : 'TRUE'
      }
      return `(${numberSql(v.raw)} BETWEEN ${params.add(low)}::float8 AND ${params.add(high)}::float8)`
    }
    case 'regex':
    case 'not_regex':
      return `(${v.text} ~ ${params.add(toPgText(toPgRegex(toPropertyString(value))))})`
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      return dateFilterSql(operator, value, v.text, pgValueDialect(params), now)
    case 'semver_eq':
    case 'semver_neq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
    case 'semver_tilde':
    case 'semver_caret':
    case 'semver_wildcard':
      return semverFilterSql(operator, value, v.text, pgValueDialect(params))
    case 'is_set':
    case 'is_not_set':
    case 'icontains_multi':
    case 'not_icontains_multi':
    case 'in':
    case 'not_in':
    case 'flag_evaluates_to':
      // is_set/is_not_set are answered above; the rest are outside PERSON_SQL_OPERATORS (the route refuses them).
      throw new AppError('not_implemented', `The property operator "${operator}" is not supported on persons yet.`)
    default:
      return assertNever(operator)
  }
}

function exactSql(value: unknown, text: string, params: PgParams): string {
  if (isTruthyOrFalsy(value)) {
    // PostHog compares booleans by truthiness: true and "true" (any case) are the same value.
    return `((lower(${text}) = 'true') = ${params.add(isTruthy(value))}::boolean)`
  }
  const list = (Array.isArray(value) ? value : [value]).map((item) => toPgText(toPropertyString(item).toLowerCase()))
  return `(lower(${text}) = ANY(${params.add(list)}::text[]))`
}

/** Rust `to_f64_representation`: a JSON number as-is, a string parsed; anything else is NULL (fails). */
function numberSql(raw: string): string {
  return `(CASE jsonb_typeof(${raw}) WHEN 'number' THEN CASE WHEN abs((${raw} #>> '{}')::numeric) < 1e300 THEN (${raw} #>> '{}')::float8 END
    WHEN 'string' THEN CASE WHEN length(${raw} #>> '{}') <= 200 AND (${raw} #>> '{}') ~ ${NUMERIC_TEXT} THEN (${raw} #>> '{}')::float8 END END)`
}

/**
 * A pattern (valid RE2, checked by the route) in PostgreSQL's ARE dialect with RE2's meaning of `.`:
 * it does not match a newline unless `(?s)` says so (ARE option `p`). PostgreSQL's engine is
 * DFA-based: without back-references (which RE2 refuses) a pattern like `^(a+)+$` runs in linear time.
 */
function toPgRegex(pattern: string): string {
  const flags = /^\(\?([a-zA-Z]+)\)/.exec(pattern)
  if (!flags) return `(?p)${pattern}`
  if (flags[1]!.includes('s')) return `(?${flags[1]!.replace(/s/g, '')})${pattern.slice(flags[0].length)}`.replace(/^\(\?\)/, '')
  return `(?p${flags[1]})${pattern.slice(flags[0].length)}`
}

/** True for PostgreSQL's "invalid regular expression" (a pattern RE2 accepts and ARE does not). */
export function isInvalidRegexError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '2201B'
}

function toNumber(value: unknown): number | undefined {
  return typeof value === 'number' ? value : parseRustFloat(toPropertyString(value))
}
