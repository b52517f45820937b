import type { Expr, Plan, Source } from '../../domain/query/query-plan.ts'
import { AppError } from '../../shared/errors.ts'
import { compileActionSql, stepFilterSql } from './action-sql.ts'
import { propertyFilterSql } from './property-filter-sql.ts'
import type { EventDialect, WindowRelationInput } from './event-dialect.ts'
import { flattenLayers, hasWindow, liftEventExpressions, shadowsColumn, type Layers } from './plan-layers.ts'
import type { SqlParams } from './sql-params.ts'
import { SESSION_PARTIAL_COLUMNS } from '../../domain/web/session-partials.ts'

export interface CompiledSql {
  sql: string
  values: (string | number | boolean)[]
}

const ALIAS = /^[a-z_][a-z0-9_]*$/i

function alias(name: string, d: EventDialect): string {
  return d.identifier(checkedAlias(name))
}

function checkedAlias(name: string): string {
  if (!ALIAS.test(name)) throw new Error(`plan alias "${name}" is not an identifier`)
  return name
}

/** The columns an expression reads from its relation (not those of plans nested in it). */
function columnsRead(e: Expr): string[] {
  const names = new Set<string>()
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === 'object') {
      const node = v as Record<string, unknown>
      if (node.op === 'column' && typeof node.name === 'string') names.add(node.name)
      for (const [k, child] of Object.entries(node)) if (k !== 'plan' && k !== 'filter' && k !== 'steps') walk(child)
    }
  }
  walk(e)
  return [...names]
}

/**
 * Compiles a plan to one parameterised statement for the dialect. The events relation always carries
 * the project filter; every literal is a bound parameter; aliases are the plan's own identifiers.
 */
export function compilePlan(plan: Plan, projectId: number, dialect: EventDialect): CompiledSql {
  const params = dialect.createParams()
  const shared: Shared = { names: dialect.sharedPlans === 'cte' ? sharedPlans(plan) : new Map(), ctes: [], done: new Set() }
  const sql = compileSelect(plan, projectId, dialect, params, shared)
  return { sql: shared.ctes.length ? `WITH ${shared.ctes.join(', ')} ${sql}` : sql, values: params.values }
}

/**
 * A plan as a subquery of a statement written elsewhere (HogQL's `sessions` table), its values bound
 * in that statement's `params` (of the same dialect's kind); plans read twice are repeated, not CTEs.
 */
export function compileSubPlan(plan: Plan, projectId: number, dialect: EventDialect, params: SqlParams): string {
  return compileSelect(plan, projectId, dialect, params)
}

/**
 * Plans that one statement reads more than once (the same object as two sources, e.g. both sides
 * of a join) become materialized CTEs, computed once, where the dialect has them: DuckDB would
 * otherwise run such a subquery, window passes and all, once per reader.
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
    } else if (s.kind !== 'events' && s.kind !== 'session_partials') visit(s.plan)
  }
  visit(root)
  return names
}

function compileSelect(plan: Plan, projectId: number, dialect: EventDialect, params: SqlParams, shared: Shared = { names: new Map(), ctes: [], done: new Set() }, above?: Layers): string {
  // Where aliases are readable in their own SELECT (ClickHouse), plans that only add columns to or
  // filter the rows of the plan below are written into its SELECT: 18.16's analysis time grows faster
  // than linearly with subquery depth (funnels nest several per step).
  // Array programs read a plan's columns: windows over the events themselves read them from a plan of their own.
  if (dialect.windowRelation && plan.source.kind === 'events' && plan.select.some((s) => hasWindow(s.expr))) {
    return compileSelect(liftEventExpressions(plan), projectId, dialect, params, shared)
  }
  if (!above && dialect.aliasesShadowColumns) {
    const flat = flattenLayers(plan, plan)
    if (flat.base !== plan) return compileSelect(flat.base, projectId, dialect, params, shared, { ...flat, top: plan })
  }
  // A source plan as a FROM item: a parenthesised subquery, or the name of its CTE.
  const from = (p: Plan): string => {
    const name = shared.names.get(p)
    if (!name) return `(${compileSelect(p, projectId, dialect, params, shared)})`
    if (!shared.done.has(p)) {
      shared.done.add(p)
      const body = compileSelect(p, projectId, dialect, params, shared)
      shared.ctes.push(dialect.cte(name, body))
    }
    return name
  }
  const onEvents = plan.source.kind === 'events'
  const needs = { person: false, elements: false }
  // Without window functions in the engine, the select's window calls are collected and computed by
  // the dialect's array program (`windowRelation`), which the select then reads as columns.
  const windows: Windows | undefined = dialect.windowRelation && plan.select.some((s) => hasWindow(s.expr)) ? [] : undefined
  const x = (e: Expr): string => compileExpr(e, { dialect, params, onEvents, needs, projectId, windows })
  // A column of a subquery passed through under its own name is written bare: ClickHouse refuses
  // `k AS k` beside the spread's `ARRAY JOIN ... AS k` (a duplicate alias).
  // Where an alias would replace a column that other expressions read (ClickHouse), the items are
  // selected under internal names (`__c<i>`) and renamed outside.
  const renamed = dialect.aliasesShadowColumns === true && shadowsColumn(plan)
  const names = plan.select.map((s, i) => (renamed ? `__c${i}` : s.alias))
  const item = (s: Plan['select'][number], i: number): string => {
    const sql = x(s.expr)
    return !onEvents && s.expr.op === 'column' && s.expr.name === names[i] ? sql : `${sql} AS ${alias(names[i]!, dialect)}`
  }
  // Layers above (see flattenLayers) read the base's aliases by name.
  const xa = (e: Expr): string => compileExpr(e, { dialect, params, onEvents: false, needs, projectId })
  const select = [...plan.select.map(item), ...(above?.items ?? []).map((s) => `${xa(s.expr)} AS ${alias(s.alias, dialect)}`)].join(', ')
  const where = plan.where ? x(plan.where) : undefined
  const layerWhere = above?.where.length ? above.where.map(xa).join(' AND ') : undefined
  // A grouped or ordered expression that is also selected is named by its position or alias (the
  // dialect's choice): DuckDB refuses bound parameters in GROUP BY, and the statement is shorter.
  const selected = plan.select.map((s) => JSON.stringify(s.expr))
  const ref = (e: Expr): string => {
    const at = selected.indexOf(JSON.stringify(e))
    return at >= 0 ? dialect.selectedRef(at + 1, alias(names[at]!, dialect)) : x(e)
  }
  const groupBy = plan.groupBy?.map(ref)
  const having = plan.having ? x(plan.having) : undefined
  const orderBy = above ? above.top.orderBy?.map((o) => `${xa(o.expr)}${o.desc ? ' DESC' : ''}`) : plan.orderBy?.map((o) => `${ref(o.expr)}${o.desc ? ' DESC' : ''}`)
  const { limit, offset } = above ? above.top : plan
  let sql: string
  if (plan.source.kind === 'events') {
    if (windows?.length) throw new Error('window calls over the events relation itself need a plan of their own on this engine')
    const from = dialect.eventsFrom(projectId, params, needs)
    sql = `SELECT ${select} FROM ${from}${[where, layerWhere].filter(Boolean).map((w) => ` AND ${w}`).join('')}`
  } else if (plan.source.kind === 'session_partials') {
    // Conditions go into the table's own WHERE: ClickHouse 18.16 does not push them into a subquery,
    // and the start filter is what limits the parts read (the table is sorted by start).
    if (windows?.length) throw new Error('window calls over the session partials need a plan of their own')
    sql = `SELECT ${select} FROM ${dialect.sessionPartialsFrom(projectId, params)}${[where, layerWhere].filter(Boolean).map((w) => ` AND ${w}`).join('')}`
  } else if (plan.source.kind === 'sequence') {
    const seq = plan.source
    const steps = seq.steps.map((st) => ({
      alias: checkedAlias(st.alias),
      fn: st.fn,
      offset: st.offset === undefined ? 1 : positive(st.offset),
      upTo: st.upTo === undefined ? undefined : positive(st.upTo),
      arg: st.arg && { refs: columnsRead(st.arg), sql: (ref: (name: string) => string) => compileExpr(st.arg!, { dialect, params, onEvents: false, needs, projectId, columnRef: ref }) },
    }))
    const items = dialect.sequence({
      from: from(seq.plan),
      columns: seq.plan.select.map((c) => checkedAlias(c.alias)),
      partitionBy: seq.partitionBy.map(checkedAlias),
      orderBy: seq.orderBy.map(checkedAlias),
      steps,
      output: sequenceOutput(plan),
    })
    const conditions = [where, layerWhere].filter(Boolean)
    sql = `SELECT ${select} FROM ${items} AS t${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''}`
  } else if (windows?.length) {
    // Windows are computed after WHERE and before any grouping: a plan grouping beside its windows is
    // not written this way (no plan of the domain does).
    if (plan.groupBy?.length || plan.having) throw new Error('a plan with window calls cannot also group on this engine')
    const columns = columnsOf(plan.source).map((n) => alias(n, dialect))
    const relation = dialect.windowRelation!({ from: sourceFrom(plan.source, from, dialect), where, columns, windows })
    sql = `SELECT ${select} FROM (${relation}) AS t${layerWhere ? ` WHERE ${layerWhere}` : ''}`
  } else {
    const conditions = [where, layerWhere].filter(Boolean)
    sql = `SELECT ${select} FROM ${sourceFrom(plan.source, from, dialect)}${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''}`
  }
  if (groupBy?.length) sql += ` GROUP BY ${groupBy.join(', ')}`
  if (having) sql += ` HAVING ${having}`
  if (orderBy?.length) sql += ` ORDER BY ${orderBy.join(', ')}`
  if (limit !== undefined) sql += ` LIMIT ${wholeNumber(limit)}`
  if (offset !== undefined) sql += ` OFFSET ${wholeNumber(offset)}`
  if (!renamed) return sql
  const outer = plan.select.map((s, i) => `${alias(names[i]!, dialect)} AS ${alias(s.alias, dialect)}`).join(', ')
  // The order again outside, where every ordered expression is selected (a projection keeps it anyway).
  const outerOrder = plan.orderBy?.map((o) => selected.indexOf(JSON.stringify(o.expr)))
  const reorder = outerOrder?.length && outerOrder.every((at) => at >= 0)
    ? ` ORDER BY ${outerOrder.map((at, i) => `${dialect.selectedRef(at + 1, alias(plan.select[at]!.alias, dialect))}${plan.orderBy![i]!.desc ? ' DESC' : ''}`).join(', ')}`
    : ''
  return `SELECT ${outer} FROM (${sql})${reorder}`
}

/** The columns a plan reads from its (sequence) source: its items, filters, groups and order. */
function sequenceOutput(plan: Plan): string[] {
  const exprs = [...plan.select.map((s) => s.expr), plan.where, ...(plan.groupBy ?? []), plan.having, ...(plan.orderBy ?? []).map((o) => o.expr)]
  return [...new Set(exprs.flatMap((e) => (e ? columnsRead(e) : [])))]
}

function wholeSigned(n: number): number {
  if (!Number.isSafeInteger(n)) throw new Error(`plan shift ${n} is not a whole number`)
  return n
}

function positive(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`plan sequence offset ${n} is not a whole number from 1`)
  return n
}

function wholeNumber(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`plan limit/offset ${n} is not a whole number`)
  return n
}

interface Scope {
  dialect: EventDialect
  /** The project every events relation is filtered to, subqueries included. */
  projectId: number
  params: SqlParams
  onEvents: boolean
  needs: { person: boolean; elements: boolean }
  /** Where window calls go when the dialect computes them as arrays (see `windowRelation`). */
  windows?: Windows
  /** How a column is written where it is not a column of the FROM (a sequence step's lambda parameter). */
  columnRef?: (name: string) => string
}

function compileExpr(e: Expr, s: Scope): string {
  const x = (a: Expr): string => compileExpr(a, s)
  const { dialect: d, params } = s
  switch (e.op) {
    case 'column':
      if (s.columnRef) return s.columnRef(checkedAlias(e.name))
      return s.onEvents ? d.eventColumn(e.name) : alias(e.name, d)
    case 'literal':
      if (e.value === null) return 'NULL'
      return d.literal(e.value, params)
    case 'time':
      return d.time(e.value.toISOString(), params)
    case 'property':
      eventsOnly(s, e.op)
      return d.property(e.source, e.key, params)
    case 'properties':
      eventsOnly(s, e.op)
      return d.properties(e.source)
    case 'property_bundle':
      eventsOnly(s, e.op)
      if (e.keys.length === 0) throw new Error('plan property_bundle needs at least one key')
      return d.propertyList(e.keys, params)
    case 'bundle_property':
      // Lists are 1-based in both engines' SQL.
      return `(${x(e.arg)})[${wholeNumber(e.at) + 1}]`
    case 'person_id':
      eventsOnly(s, e.op)
      s.needs.person = true
      return d.personId
    case 'floor':
      return d.cast(`floor(${x(e.arg)})`, 'int64')
    case 'to_number':
      return d.tryDouble(x(e.arg))
    case 'bucket':
      return d.bucket(e.interval, e.offsets, x(e.arg))
    case 'shift':
      return d.shift(e.interval, typeof e.n === 'number' ? String(wholeSigned(e.n)) : x(e.n), x(e.arg))
    case 'epoch_ms':
      return d.epochMs(x(e.arg))
    case 'time_of_ms':
      return d.timeOfMs(x(e.arg))
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
      return e.args.length === 0 ? d.bool(e.op === 'and') : `(${e.args.map(x).join(e.op === 'and' ? ' AND ' : ' OR ')})`
    case 'not':
      return `(NOT ${x(e.arg)})`
    case 'is_null':
      return `(${x(e.arg)} IS NULL)`
    case 'in':
      return e.values.length === 0 ? d.bool(false) : `(${x(e.arg)} IN (${e.values.map((v) => x({ op: 'literal', value: v })).join(', ')}))`
    case 'case':
      return `(CASE ${e.when.map(([c, v]) => `WHEN ${x(c)} THEN ${x(v)}`).join(' ')} ELSE ${x(e.else)} END)`
    case 'concat':
      return d.concatWs(params.add(e.separator), e.args.map(x))
    case 'coalesce':
      return `COALESCE(${e.args.map(x).join(', ')})`
    case 'to_text':
      return d.cast(x(e.arg), 'text')
    case 'lower':
      return d.lower(x(e.arg))
    case 'matches':
      return d.regexMatch(x(e.arg), d.constant(d.regexSource(e.pattern)))
    case 'regex_extract':
      return d.regexExtract(x(e.arg), d.constant(d.regexSource(e.pattern)))
    case 'lookup': {
      // Constants of ours, written in place (no parameters): the tables hold thousands of keys.
      const arg = x(e.arg)
      const whens = e.table.filter(([, keys]) => keys.length > 0).map(([value, keys]) => `WHEN ${arg} IN (${keys.map((k) => d.constant(k)).join(', ')}) THEN ${d.constant(value)}`)
      return whens.length === 0 ? 'NULL' : `(CASE ${whens.join(' ')} ELSE NULL END)`
    }
    case 'window': {
      const call = {
        fn: e.fn,
        arg: e.arg ? x(e.arg) : undefined,
        by: e.by ? x(e.by) : undefined,
        partitionBy: e.partitionBy.map(x),
        orderBy: e.orderBy.map((o) => ({ sql: x(o.expr), desc: o.desc })),
        frame: e.frame,
      }
      if (!s.windows) return d.window(call)
      const name = `__w${s.windows.length}`
      s.windows.push({ name, call })
      return name
    }
    case 'property_filter': {
      eventsOnly(s, e.op)
      const type = e.filter.type ?? 'event'
      if (type !== 'event' && type !== 'person' && type !== 'element') {
        throw new AppError('validation_error', `Property filters of type "${type}" are not supported here.`, 'properties')
      }
      const r = stepFilterSql(e.filter, d, params)
      if (r.needsElements) s.needs.elements = true
      return r.condition
    }
    case 'value_filter': {
      const value = x(e.arg)
      return propertyFilterSql(e.filter, { present: `(${value} IS NOT NULL)`, text: d.cast(value, 'text') }, d, params)
    }
    case 'action': {
      eventsOnly(s, e.op)
      const r = compileActionSql(e.steps, d, params)
      if (r.needsElements) s.needs.elements = true
      // The prefilter is implied by the condition, cheap (no parsed elements), and binds parameters of its own.
      return `(${r.prefilter} AND ${r.condition})`
    }
    case 'regex_match':
      return d.regexMatch(x(e.arg), params.add(d.regexSource(e.pattern)))
    case 'regex_replace':
      return d.regexReplace(x(e.arg), params.add(d.regexSource(e.pattern)), params.add(e.replacement))
    case 'in_plan':
      if (e.plan.select.length !== 1) throw new Error('plan expression in_plan needs a plan of one column')
      // An uncorrelated subquery (its own aliases shadow the outer ones), with its own project filter.
      return `COALESCE(${x(e.arg)} IN (${compileSelect(e.plan, s.projectId, d, params)}), ${d.bool(false)})`
  }
}

function eventsOnly(s: Scope, op: string): void {
  if (!s.onEvents) throw new Error(`plan expression ${op} reads events but the relation is a subquery`)
}

type Windows = Array<{ name: string; call: WindowRelationInput['windows'][number]['call'] }>

/** The FROM item of a plan's source other than the events (a subquery, a spread or a join), its rows aliased `t` or `l`/`r`. */
function sourceFrom(src: Exclude<Source, { kind: 'events' | 'session_partials' }>, from: (p: Plan) => string, d: EventDialect): string {
  if (src.kind === 'join') {
    if (src.using.length === 0) throw new Error('plan join needs at least one column to join on')
    return d.join(from(src.left), from(src.right), src.using.map((u) => alias(u, d)), src.keepLeft === true)
  }
  if (src.kind === 'sequence') throw new Error('a sequence source is compiled by compileSelect itself')
  const inner = `${from(src.plan)} AS t`
  return src.kind === 'spread' ? d.spread(inner, wholeNumber(src.times)) : inner
}

/** The column names a source offers a plan reading it. */
function columnsOf(source: Exclude<Source, { kind: 'events' }>): string[] {
  switch (source.kind) {
    case 'session_partials':
      return [...SESSION_PARTIAL_COLUMNS]
    case 'plan':
      return source.plan.select.map((s) => s.alias)
    case 'spread':
      return [...source.plan.select.map((s) => s.alias), 'k']
    case 'join':
      return [...new Set([...source.left.select.map((s) => s.alias), ...source.right.select.map((s) => s.alias)])]
    case 'sequence':
      return [...source.plan.select.map((s) => s.alias), ...source.steps.map((st) => st.alias)]
  }
}

