import { constantLiteral, type ValueSqlDialect } from '../sql/value-sql-dialect.ts'
import type { SqlParams } from '../event-sql/sql-params.ts'

/**
 * DuckDB's side of the shared date and version filter SQL. A value used many times is bound once
 * through a one-element list and a lambda (`list_transform([x], lambda v: ...)[1]`), which DuckDB
 * evaluates in the row's own pipeline, where a correlated subquery would become a join.
 */
export function duckDbValueDialect(params: SqlParams): ValueSqlDialect {
  let lambdas = 0
  const fresh = (): string => `__v${lambdas++}`
  return {
    bind: (value) => (typeof value === 'number' ? `${params.add(value)}::DOUBLE` : `${params.add(value)}::VARCHAR`),
    matches: (text, pattern) => `regexp_matches(${text}, ${constantLiteral(pattern)})`,
    let(expr, body) {
      const v = fresh()
      return `list_transform([${expr}], lambda ${v}: ${body(v)})[1]`
    },
    groups(text, pattern, names, body) {
      const v = fresh()
      const extract = `regexp_extract(${text}, ${constantLiteral(pattern)}, [${names.map(constantLiteral).join(', ')}])`
      return `list_transform([${extract}], lambda ${v}: ${body((name) => `${v}."${name}"`)})[1]`
    },
    toDouble: (text) => `TRY_CAST(${text} AS DOUBLE)`,
    isFinite: (value) => `isfinite(${value})`,
    trim: (text, chars) => `trim(${text}, ${constantLiteral(chars)})`,
    trimStart: (text, chars) => `ltrim(${text}, ${constantLiteral(chars)})`,
    padStart: (text, width, char) => `lpad(${text}, ${Math.trunc(width)}, ${constantLiteral(char)})`,
    mapParts(text, part) {
      const v = fresh()
      return `array_to_string(list_transform(string_split(${text}, '.'), lambda ${v}: ${part(v)}), '')`
    },
    compareBytes: (left, op, right) => `(${left} ${op} ${right})`,
  }
}
