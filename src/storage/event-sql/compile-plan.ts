import type { Expr, Plan, WindowFrame } from '../../../domain/query/query-plan.ts'
import { createSqlParams, type SqlParams } from '../duckdb-action-elements-sql.ts'
import type { Dialect } from './duckdb-dialect.ts'

export interface CompiledSql {
  sql: string
  values: (string | number | boolean)[]
}

const ALIAS = /^[a-z_][a-z0-9_]*$/i

function alias(name: string): string {
  if (!ALIAS.test(name)) throw new Error(`plan alias "${name}" is not an identifier`)
  return `"${name}"`
}

/**
 * Compiles a plan to one parameterised statement for the dialect. The events relation always carries
 * the project filter; every literal is a bound parameter; aliases are the plan's own identifiers.
 */
export function compilePlan(plan: Plan, projectId: number, dialect: Dialect): CompiledSql {
  const params = createSqlParams()
  const shared: Shared = { names: sharedPlans(plan), ctes: [], done: new Set() }
  const sql = compileSelect(plan, projectId, dialect, params, shared)
  return { sql: shared.ctes.length ? `WITH ${shared.ctes.join(', ')} ${sql}` : sql, values: params.values }
}

/**
 * Plans that one statement reads more than once (the same object as two sources, e.g. both sides
 * of a join) become materialized CTEs, computed once: DuckDB would otherwise run such a subquery,
 * window passes and all, once per reader.
 */
interface Shared {
  names: Map<Plan, string>
  ctes: string[]
  done: Set<Plan>
}

function sharedPlans(root: Plan): Map<Plan, string> {
  const seen = new Set<Plan>()
  const names = new Map<Plan, string>()
  const visit = (p: Plan): void => {
    if (seen.has(p)) {
      if (!names.has(p)) names.set(p, `shared_${names.size}`)
      return
    }
    seen.add(p)
    const s = p.source
    if (s.kind === 'join') {
      visit(s.left)
      visit(s.right)
    } else if (s.kind !== 'events') visit(s.plan)
  }
  visit(root)
  return names
}

function compileSelect(plan: Plan, projectId: number, dialect: Dialect, params: SqlParams, shared: Shared = { names: new Map(), ctes: [], done: new Set() }): string {
  // A source plan as a FROM item: a parenthesised subquery, or the name of its CTE.
  const from = (p: Plan): string => {
    const name = shared.names.get(p)
    if (!name) return `(${compileSelect(p, projectId, dialect, params, shared)})`
    if (!shared.done.has(p)) {
      shared.done.add(p)
      const body = compileSelect(p, projectId, dialect, params, shared)
      shared.ctes.push(`${name} AS MATERIALIZED (${body})`)
    }
    return name
  }
  const onEvents = plan.source.kind === 'events'
  const needs = { person: false, elements: false }
  const x = (e: Expr): string => compileExpr(e, { dialect, params, onEvents, needs, projectId })
  const select = plan.select.map((s) => `${x(s.expr)} AS ${alias(s.alias)}`).join(', ')
  const where = plan.where ? x(plan.where) : undefined
  // A grouped or ordered expression that is also selected is named by its position: DuckDB refuses
  // bound parameters in GROUP BY, and the statement is shorter.
  const selected = plan.select.map((s) => JSON.stringify(s.expr))
  const ref = (e: Expr): string => {
    const at = selected.indexOf(JSON.stringify(e))
    return at >= 0 ? String(at + 1) : x(e)
  }
  const groupBy = plan.groupBy?.map(ref)
  const having = plan.having ? x(plan.having) : undefined
  const orderBy = plan.orderBy?.map((o) => `${ref(o.expr)}${o.desc ? ' DESC' : ''}`)
  let sql: string
  if (plan.source.kind === 'events') {
    const from = dialect.eventsFrom(params.add(projectId), needs)
    sql = `SELECT ${select} FROM ${from}${where ? ` AND ${where}` : ''}`
  } else if (plan.source.kind === 'join') {
    const { left, right, using, keepLeft } = plan.source
    if (using.length === 0) throw new Error('plan join needs at least one column to join on')
    const joined = `${from(left)} AS l ${keepLeft ? 'LEFT JOIN' : 'JOIN'} ${from(right)} AS r USING (${using.map(alias).join(', ')})`
    sql = `SELECT ${select} FROM ${joined}${where ? ` WHERE ${where}` : ''}`
  } else {
    const inner = `${from(plan.source.plan)} AS t`
    const source = plan.source.kind === 'spread' ? `${inner} CROSS JOIN range(${wholeNumber(plan.source.times)}) AS spread(k)` : inner
    sql = `SELECT ${select} FROM ${source}${where ? ` WHERE ${where}` : ''}`
  }
  if (groupBy?.length) sql += ` GROUP BY ${groupBy.join(', ')}`
  if (having) sql += ` HAVING ${having}`
  if (orderBy?.length) sql += ` ORDER BY ${orderBy.join(', ')}`
  if (plan.limit !== undefined) sql += ` LIMIT ${wholeNumber(plan.limit)}`
  if (plan.offset !== undefined) sql += ` OFFSET ${wholeNumber(plan.offset)}`
  return sql
}

function wholeSigned(n: number): number {
  if (!Number.isSafeInteger(n)) throw new Error(`plan shift ${n} is not a whole number`)
  return n
}

function wholeNumber(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`plan limit/offset ${n} is not a whole number`)
  return n
}

interface Scope {
  dialect: Dialect
  /** The project every events relation is filtered to, subqueries included. */
  projectId: number
  params: SqlParams
  onEvents: boolean
  needs: { person: boolean; elements: boolean }
}

function compileExpr(e: Expr, s: Scope): string {
  const x = (a: Expr): string => compileExpr(a, s)
  const { dialect: d, params } = s
  switch (e.op) {
    case 'column':
      return s.onEvents ? d.eventColumn(e.name) : alias(e.name)
    case 'literal':
      if (e.value === null) return 'NULL'
      if (typeof e.value === 'number') return Number.isInteger(e.value) ? `${params.add(e.value)}::BIGINT` : `${params.add(e.value)}::DOUBLE`
      return params.add(e.value)
    case 'time':
      return d.time(params.add(e.value.toISOString()))
    case 'property':
      eventsOnly(s, e.op)
      return d.property(e.source, e.key, params)
    case 'properties':
      eventsOnly(s, e.op)
      return d.properties(e.source)
    case 'person_id':
      eventsOnly(s, e.op)
      s.needs.person = true
      return d.personId
    case 'floor':
      return `CAST(floor(${x(e.arg)}) AS BIGINT)`
    case 'to_number':
      return d.toNumber(x(e.arg))
    case 'bucket':
      return d.bucket(e.interval, e.offsets, x(e.arg))
    case 'shift':
      return d.shift(e.interval, typeof e.n === 'number' ? String(wholeSigned(e.n)) : x(e.n), x(e.arg))
    case 'epoch_ms':
      return d.epochMs(x(e.arg))
    case 'aggregate':
      return d.aggregate(e.fn, e.arg ? x(e.arg) : undefined, { distinct: e.distinct, quantile: e.quantile, by: e.by ? x(e.by) : undefined })
    case 'binary':
      return `(${x(e.left)} ${e.fn === '/' ? '/' : e.fn} ${x(e.right)})`
    case 'bit_flag':
      return d.bitFlag(x(e.index))
    case 'bits_any':
      return d.bitsAny(x(e.arg), e.mask)
    case 'bits_shift_right':
      return d.bitsShiftRight(x(e.arg), x(e.by))
    case 'and':
    case 'or':
      return e.args.length === 0 ? (e.op === 'and' ? 'TRUE' : 'FALSE') : `(${e.args.map(x).join(e.op === 'and' ? ' AND ' : ' OR ')})`
    case 'not':
      return `(NOT ${x(e.arg)})`
    case 'is_null':
      return `(${x(e.arg)} IS NULL)`
    case 'in':
      return e.values.length === 0 ? 'FALSE' : `(${x(e.arg)} IN (${e.values.map((v) => x({ op: 'literal', value: v })).join(', ')}))`
    case 'case':
      return `(CASE ${e.when.map(([c, v]) => `WHEN ${x(c)} THEN ${x(v)}`).join(' ')} ELSE ${x(e.else)} END)`
    case 'concat':
      return `concat_ws(${params.add(e.separator)}, ${e.args.map(x).join(', ')})`
    case 'coalesce':
      return `COALESCE(${e.args.map(x).join(', ')})`
    case 'to_text':
      return d.toText(x(e.arg))
    case 'window': {
      const f = e.fn
      const fn = f === 'lag' || f === 'lead' || f === 'row_number' || f === 'dense_rank' ? `${f}(${e.arg ? x(e.arg) : ''})` : d.aggregate(f, e.arg ? x(e.arg) : undefined, { by: e.by ? x(e.by) : undefined })
      const partition = e.partitionBy.length ? `PARTITION BY ${e.partitionBy.map(x).join(', ')}` : ''
      const order = e.orderBy.length ? ` ORDER BY ${e.orderBy.map((o) => `${x(o.expr)}${o.desc ? ' DESC' : ''}`).join(', ')}` : ''
      return `${fn} OVER (${partition}${order}${e.frame ? ` ${frameSql(e.frame)}` : ''})`
    }
    case 'property_filter': {
      eventsOnly(s, e.op)
      const r = d.propertyFilter(e.filter, params)
      if (r.needsElements) s.needs.elements = true
      return r.sql
    }
    case 'action': {
      eventsOnly(s, e.op)
      const r = d.action(e.steps, params)
      if (r.needsElements) s.needs.elements = true
      return r.sql
    }
    case 'in_plan':
      if (e.plan.select.length !== 1) throw new Error('plan expression in_plan needs a plan of one column')
      // An uncorrelated subquery (its own aliases shadow the outer ones), with its own project filter.
      return `COALESCE(${x(e.arg)} IN (${compileSelect(e.plan, s.projectId, d, params)}), FALSE)`
  }
}

/** `ROWS|RANGE BETWEEN ... AND ... [EXCLUDE CURRENT ROW]`; the offsets are whole numbers, never parameters. */
function frameSql(f: WindowFrame): string {
  const end = (v: 'unbounded' | number, side: 'PRECEDING' | 'FOLLOWING'): string => {
    if (v === 'unbounded') return `UNBOUNDED ${side}`
    if (v === 0) return 'CURRENT ROW'
    return `${wholeNumber(Math.abs(v))} ${v < 0 ? 'PRECEDING' : 'FOLLOWING'}`
  }
  const unit = f.unit === 'rows' ? 'ROWS' : 'RANGE'
  return `${unit} BETWEEN ${end(f.start, 'PRECEDING')} AND ${end(f.end, 'FOLLOWING')}${f.excludeCurrent ? ' EXCLUDE CURRENT ROW' : ''}`
}

function eventsOnly(s: Scope, op: string): void {
  if (!s.onEvents) throw new Error(`plan expression ${op} reads events but the relation is a subquery`)
}
