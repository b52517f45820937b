import type { HogQLExpr, IntervalUnit } from '../../../domain/hogql/hogql-ast.ts'
import { hogqlError } from '../../../domain/hogql/hogql-error.ts'
import { printExpr } from '../../../domain/hogql/print-hogql.ts'
import { translateCall } from './hogql-duckdb-functions.ts'
import { asDate, asDateTime, asNumber, asText, type ExprScope, type HType, type Typed } from './hogql-sql-types.ts'

const INTERVAL_FN: Record<IntervalUnit, string> = {
  second: 'to_seconds', minute: 'to_minutes', hour: 'to_hours', day: 'to_days', week: 'to_weeks', month: 'to_months', quarter: 'to_quarters', year: 'to_years',
}

const INT64_MAX = 2n ** 63n - 1n
const INT128_MAX = 2n ** 127n - 1n

/**
 * A constant as a bound, typed parameter (client values never enter the SQL text). An integer
 * literal past 2^53 (`digits`) is bound as its text and cast: BIGINT when Int64 holds it (so
 * `9223372036854775807 + 1` overflows in DuckDB, a 400, as Int64 arithmetic does), HUGEINT past it,
 * DOUBLE past that. A JS number there would be rounded, and bound as an integer out of Int64's range.
 */
export function constantSql(value: string | number | boolean | null, scope: ExprScope, digits?: string): Typed {
  if (value === null) return { sql: 'NULL', type: 'null' }
  if (digits !== undefined) {
    const n = BigInt(digits)
    const abs = n < 0n ? -n : n
    return { sql: `${scope.params.add(digits)}::${abs <= INT64_MAX ? 'BIGINT' : abs <= INT128_MAX ? 'HUGEINT' : 'DOUBLE'}`, type: 'number' }
  }
  if (typeof value === 'boolean') return { sql: `${scope.params.add(value)}::BOOLEAN`, type: 'bool' }
  if (typeof value === 'number') return { sql: `${scope.params.add(value)}::${Number.isSafeInteger(value) ? 'BIGINT' : 'DOUBLE'}`, type: 'number' }
  return { sql: `${scope.params.add(value)}::VARCHAR`, type: 'string', text: value }
}

/** One HogQL expression as DuckDB SQL in the scope; a 400 naming what cannot be run. */
export function translateExpr(e: HogQLExpr, scope: ExprScope): Typed {
  const x = (a: HogQLExpr) => translateExpr(a, scope)
  switch (e.kind) {
    case 'constant':
      return constantSql(e.value, scope, e.digits)
    case 'field':
      return scope.field(e.chain)
    case 'star':
      throw hogqlError(`"${printExpr(e)}" is only allowed in the select list or count(*).`)
    case 'call':
      return translateCall(e, scope, x)
    case 'arithmetic':
      return arithmetic(e.op, x(e.left), x(e.right), scope)
    case 'compare':
      return compare(e, scope)
    case 'and':
    case 'or':
      return { sql: `(${e.args.map((a) => x(a).sql).join(e.kind === 'and' ? ' AND ' : ' OR ')})`, type: 'bool' }
    case 'not':
      return { sql: `(NOT ${x(e.arg).sql})`, type: 'bool' }
    case 'negate':
      return { sql: `(- ${asNumber(x(e.arg))})`, type: 'number' }
    case 'is_null':
      return { sql: `(${x(e.arg).sql} IS ${e.negated ? 'NOT ' : ''}NULL)`, type: 'bool' }
    case 'between': {
      const arg = x(e.arg)
      const [a, low] = coerce(arg, x(e.low), scope)
      const [, high] = coerce(arg, x(e.high), scope)
      return { sql: `(${a} ${e.negated ? 'NOT ' : ''}BETWEEN ${low} AND ${high})`, type: 'bool' }
    }
    case 'case': {
      const subject = e.subject ? x(e.subject) : null
      const whens = e.when.map(([c, v]) => {
        const cond = subject ? coerce(subject, x(c), scope)[1] : x(c).sql
        return { cond, value: x(v) }
      })
      const type = whens.find((w) => w.value.type !== 'null')?.value.type ?? 'unknown'
      const otherwise = e.else ? ` ELSE ${x(e.else).sql}` : ''
      return { sql: `(CASE${subject ? ` ${subject.sql}` : ''}${whens.map((w) => ` WHEN ${w.cond} THEN ${w.value.sql}`).join('')}${otherwise} END)`, type }
    }
    case 'interval': {
      const n = x(e.value)
      const cast = e.unit === 'second' ? 'DOUBLE' : 'INTEGER'
      const calendar = e.unit !== 'second' && e.unit !== 'minute' && e.unit !== 'hour'
      return { sql: `${INTERVAL_FN[e.unit]}(CAST(${asNumber(n)} AS ${cast}))`, type: 'interval', calendar }
    }
    case 'tuple':
    case 'array':
      throw hogqlError(`"${printExpr(e)}": lists are only supported on the right of IN.`)
    case 'subquery':
      return scope.subquery(e.query)
  }
}

function arithmetic(op: string, left: Typed, right: Typed, scope: ExprScope): Typed {
  if (op === '||') return { sql: `(${asText(left, scope)} || ${asText(right, scope)})`, type: 'string' }
  const isTime = (t: HType) => t === 'datetime' || t === 'date'
  if ((op === '+' || op === '-') && (right.type === 'interval' || left.type === 'interval')) {
    const time = right.type === 'interval' ? left : right
    const base = time.type === 'date' ? time.sql : asDateTime(time, scope)
    const interval = right.type === 'interval' ? right : left
    if (time.type === 'date') return { sql: `CAST((${base} ${op} ${interval.sql}) AS DATE)`, type: 'date' }
    if (!interval.calendar) return { sql: `(${base} ${op} ${interval.sql})`, type: 'datetime' }
    // Days and longer move on the project's wall clock (a day is 23 hours across a spring change), as ClickHouse does.
    const tz = scope.params.add(scope.timeZone)
    return { sql: `timezone(${tz}, (timezone(${tz}, ${base}) ${op} ${interval.sql}))`, type: 'datetime' }
  }
  if (op === '-' && isTime(left.type) && isTime(right.type)) {
    return { sql: `(epoch(${asDateTime(left, scope)}) - epoch(${asDateTime(right, scope)}))`, type: 'number' }
  }
  return { sql: `(${asNumber(left)} ${op} ${asNumber(right)})`, type: 'number' }
}

/** Both sides in comparable types, as ClickHouse compares them: times read in the project's zone, properties as numbers beside numbers. */
export function coerce(left: Typed, right: Typed, scope: ExprScope): [string, string] {
  const pair = (l: string, r: string): [string, string] => [l, r]
  if (left.type === 'null' || right.type === 'null') return pair(left.sql, right.sql)
  if (left.type === 'datetime' || right.type === 'datetime') return pair(asDateTime(left, scope), asDateTime(right, scope))
  if (left.type === 'date' || right.type === 'date') return pair(asDate(left, scope), asDate(right, scope))
  if (left.type === 'number' || right.type === 'number') return pair(asNumber(left), asNumber(right))
  if (left.type === 'bool' || right.type === 'bool') {
    const b = (t: Typed) => (t.type === 'bool' ? t.sql : `TRY_CAST(${t.sql} AS BOOLEAN)`)
    return pair(b(left), b(right))
  }
  const known = (t: HType) => t === 'string' || t === 'json' || t === 'unknown'
  if (known(left.type) && known(right.type)) return pair(left.sql, right.sql)
  return pair(asText(left, scope), asText(right, scope))
}

function compare(e: Extract<HogQLExpr, { kind: 'compare' }>, scope: ExprScope): Typed {
  const left = translateExpr(e.left, scope)
  if (e.op === 'in' || e.op === 'not in') {
    const not = e.op === 'not in' ? 'NOT ' : ''
    if (e.right.kind === 'subquery') return { sql: `(${left.sql} ${not}IN ${scope.subquery(e.right.query).sql})`, type: 'bool' }
    const items = e.right.kind === 'tuple' || e.right.kind === 'array' ? e.right.items : [e.right]
    if (items.length === 0) return { sql: not ? 'TRUE' : 'FALSE', type: 'bool' }
    const sides = items.map((i) => coerce(left, translateExpr(i, scope), scope))
    return { sql: `(${sides[0]![0]} ${not}IN (${sides.map((s) => s[1]).join(', ')}))`, type: 'bool' }
  }
  const right = translateExpr(e.right, scope)
  if (e.op === 'like' || e.op === 'ilike' || e.op === 'not like' || e.op === 'not ilike') {
    return { sql: `(${asText(left, scope)} ${e.op.toUpperCase()} ${asText(right, scope)})`, type: 'bool' }
  }
  // HogQL reads `x = NULL` as isNull(x), `x != NULL` as isNotNull(x).
  if ((e.op === '=' || e.op === '!=') && (left.type === 'null' || right.type === 'null')) {
    const other = left.type === 'null' ? right : left
    return { sql: `(${other.sql} IS ${e.op === '=' ? '' : 'NOT '}NULL)`, type: 'bool' }
  }
  const [l, r] = coerce(left, right, scope)
  return { sql: `(${l} ${e.op} ${r})`, type: 'bool' }
}
