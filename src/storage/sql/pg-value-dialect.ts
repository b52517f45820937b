import type { PgParams } from './sql-property-filter.ts'
import { toPgText } from './sql-text.ts'
import { constantLiteral, type ValueSqlDialect } from './value-sql-dialect.ts'

// Decimal text PostgreSQL's numeric reads without failing (an exponent of up to three digits).
const DECIMAL = '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]{1,3})?$'

/**
 * PostgreSQL's (and PGlite's) side of the shared date and version filter SQL. Values used many
 * times are named in a scalar subquery. Numbers go through `numeric`, so no cast can fail: what a
 * double cannot hold (beyond 1e300, or nonzero under 1e-300) reads as NULL, which the existing
 * numeric operators here also leave unmatched. Texts compare under the "C" collation (bytes).
 */
export function pgValueDialect(params: PgParams): ValueSqlDialect {
  let subqueries = 0
  const fresh = (): string => `__v${subqueries++}`
  return {
    bind: (value) => (typeof value === 'number' ? `${params.add(value)}::float8` : `${params.add(toPgText(value))}::text`),
    matches: (text, pattern) => `(${text} ~ ${constantLiteral(pattern)})`,
    let(expr, body) {
      const v = fresh()
      return `(SELECT ${body(`${v}.v`)} FROM (SELECT ${expr} AS v OFFSET 0) AS ${v})`
    },
    groups(text, pattern, names, body) {
      const v = fresh()
      return `(SELECT ${body((name) => `COALESCE(${v}.g[${names.indexOf(name) + 1}], '')`)} FROM (SELECT regexp_match(${text}, ${constantLiteral(pattern)}) AS g OFFSET 0) AS ${v})`
    },
    toDouble(text) {
      const v = fresh()
      const n = `${v}.n`
      return `(SELECT CASE WHEN abs(${n}) >= 1e300 OR (${n} <> 0 AND abs(${n}) < 1e-300) THEN NULL ELSE ${n}::float8 END
        FROM (SELECT CASE WHEN length(${text}) <= 1000 AND ${text} ~ ${constantLiteral(DECIMAL)} THEN (${text})::numeric END AS n OFFSET 0) AS ${v})`
    },
    isFinite: (value) => `(${value} NOT IN ('Infinity'::float8, '-Infinity'::float8, 'NaN'::float8))`,
    trim: (text, chars) => `btrim(${text}, ${constantLiteral(chars)})`,
    trimStart: (text, chars) => `ltrim(${text}, ${constantLiteral(chars)})`,
    padStart: (text, width, char) => `lpad(${text}, ${Math.trunc(width)}, ${constantLiteral(char)})`,
    mapParts(text, part) {
      const v = fresh()
      return `(SELECT string_agg(${part(`${v}.x`)}, '' ORDER BY ${v}.o) FROM unnest(string_to_array(${text}, '.')) WITH ORDINALITY AS ${v}(x, o))`
    },
    compareBytes: (left, op, right) => `(${left} COLLATE "C" ${op} ${right})`,
  }
}
