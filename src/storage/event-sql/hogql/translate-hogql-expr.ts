import type { HogQLExpr } from '../../../domain/hogql/hogql-ast.ts'
import { hogqlError } from '../../../domain/hogql/hogql-error.ts'
import type { HogQLFunctionName } from '../../../domain/hogql/hogql-functions.ts'
import { printExpr } from '../../../domain/hogql/print-hogql.ts'
import type { ExprScope, HType, Typed } from './hogql-sql-types.ts'

/** A constant through the dialect (client values never enter the SQL text unescaped or unbound). */
export function constantSql(value: string | number | boolean | null, scope: ExprScope, digits?: string): Typed {
  if (value === null) return { sql: 'NULL', type: 'null' }
  return scope.dialect.constant(value, scope.params, digits)
}

/** One HogQL expression as SQL of the scope's dialect; a 400 naming what cannot be run. */
export function translateExpr(e: HogQLExpr, scope: ExprScope): Typed {
  const x = (a: HogQLExpr) => translateExpr(a, scope)
  const d = scope.dialect
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
      return { sql: `(- ${d.toNumber(x(e.arg))})`, type: 'number' }
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
    case 'interval':
      return d.interval(e.unit, x(e.value))
    case 'tuple':
    case 'array':
      throw hogqlError(`"${printExpr(e)}": lists are only supported on the right of IN.`)
    case 'subquery':
      return scope.subquery(e.query)
  }
}

function arithmetic(op: string, left: Typed, right: Typed, scope: ExprScope): Typed {
  const d = scope.dialect
  if (op === '||') return { sql: d.concat([d.toText(left, scope), d.toText(right, scope)]), type: 'string' }
  const isTime = (t: HType) => t === 'datetime' || t === 'date'
  if ((op === '+' || op === '-') && (right.type === 'interval' || left.type === 'interval')) {
    const time = right.type === 'interval' ? left : right
    const interval = right.type === 'interval' ? right : left
    return d.addInterval(time, op, interval, scope)
  }
  if (op === '-' && isTime(left.type) && isTime(right.type)) {
    return { sql: d.secondsBetween(d.toDateTime(left, scope), d.toDateTime(right, scope)), type: 'number' }
  }
  return { sql: `(${d.toNumber(left)} ${op} ${d.toNumber(right)})`, type: 'number' }
}

/** Both sides in comparable types, as ClickHouse compares them: times read in the project's zone, properties as numbers beside numbers. */
export function coerce(left: Typed, right: Typed, scope: ExprScope): [string, string] {
  const d = scope.dialect
  const pair = (l: string, r: string): [string, string] => [l, r]
  if (left.type === 'null' || right.type === 'null') return pair(left.sql, right.sql)
  if (left.type === 'datetime' || right.type === 'datetime') return pair(d.toDateTime(left, scope), d.toDateTime(right, scope))
  if (left.type === 'date' || right.type === 'date') return pair(d.toDate(left, scope), d.toDate(right, scope))
  if (left.type === 'number' || right.type === 'number') return pair(d.toNumber(left), d.toNumber(right))
  if (left.type === 'bool' || right.type === 'bool') return pair(d.toBool(left), d.toBool(right))
  const known = (t: HType) => t === 'string' || t === 'json' || t === 'unknown'
  if (known(left.type) && known(right.type)) return pair(left.sql, right.sql)
  return pair(d.toText(left, scope), d.toText(right, scope))
}

function compare(e: Extract<HogQLExpr, { kind: 'compare' }>, scope: ExprScope): Typed {
  const left = translateExpr(e.left, scope)
  if (e.op === 'in' || e.op === 'not in') {
    const not = e.op === 'not in' ? 'NOT ' : ''
    if (e.right.kind === 'subquery') return { sql: `(${left.sql} ${not}IN ${scope.subquery(e.right.query).sql})`, type: 'bool' }
    const items = e.right.kind === 'tuple' || e.right.kind === 'array' ? e.right.items : [e.right]
    if (items.length === 0) return { sql: scope.dialect.bool(not !== ''), type: 'bool' }
    const sides = items.map((i) => coerce(left, translateExpr(i, scope), scope))
    return { sql: `(${sides[0]![0]} ${not}IN (${sides.map((s) => s[1]).join(', ')}))`, type: 'bool' }
  }
  const right = translateExpr(e.right, scope)
  if (e.op === 'like' || e.op === 'ilike' || e.op === 'not like' || e.op === 'not ilike') {
    return { sql: scope.dialect.like(scope.dialect.toText(left, scope), e.op, scope.dialect.toText(right, scope)), type: 'bool' }
  }
  // HogQL reads `x = NULL` as isNull(x), `x != NULL` as isNotNull(x).
  if ((e.op === '=' || e.op === '!=') && (left.type === 'null' || right.type === 'null')) {
    const other = left.type === 'null' ? right : left
    return { sql: `(${other.sql} IS ${e.op === '=' ? '' : 'NOT '}NULL)`, type: 'bool' }
  }
  const [l, r] = coerce(left, right, scope)
  return { sql: `(${l} ${e.op} ${r})`, type: 'bool' }
}

/** A call of an allow-listed function (the parser checked the name and arity) in the scope's dialect. */
function translateCall(call: Extract<HogQLExpr, { kind: 'call' }>, scope: ExprScope, x: (e: HogQLExpr) => Typed): Typed {
  const functions: ReadonlyMap<string, (typeof scope.dialect.functions)[HogQLFunctionName]> = new Map(Object.entries(scope.dialect.functions))
  const emit = functions.get(call.name)
  if (!emit) throw hogqlError(`Unsupported function "${call.name}".`)
  // JSON keys and dateDiff's unit are read as constants, not translated as values.
  const readAsConstant = (i: number) => (call.name === 'dateDiff' && i === 0) || (call.name.startsWith('JSON') && i > 0)
  const a = call.args.map((arg, i): Typed => (readAsConstant(i) ? { sql: '', type: 'unknown' } : x(arg)))
  return emit({ a, call, scope, tz: () => scope.params.add(scope.timeZone) })
}
