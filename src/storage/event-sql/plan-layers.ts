import type { Expr, Plan, SelectItem } from '../../domain/query/query-plan.ts'

// Plan rewrites the compiler applies for engines without window functions or whose SELECT aliases
// shadow columns (ClickHouse): what a plan reads, merging layers into one SELECT, lifting the events'
// expressions under a windowed plan. Pure functions of plans.

export function hasWindow(e: Expr): boolean {
  if (e.op === 'window') return true
  return Object.values(e).some((v) => (Array.isArray(v) ? v.some(isExprOrPair) : isExpr(v) && hasWindow(v)))
  function isExprOrPair(v: unknown): boolean {
    return Array.isArray(v) ? v.some(isExprOrPair) : isExpr(v) && hasWindow(v)
  }
}

export function isExpr(v: unknown): v is Expr {
  return typeof v === 'object' && v !== null && typeof (v as { op?: unknown }).op === 'string'
}

/**
 * Whether a select alias names a column that another part of the plan reads (another item, WHERE,
 * GROUP BY, HAVING, ORDER BY) while the item is not that column passed through: on an engine whose
 * aliases shadow columns, that part would read the item instead.
 */
export function shadowsColumn(plan: Plan): boolean {
  const read = (e: Expr | undefined, into: Set<string>): Set<string> => {
    if (e) collectColumns(e, into)
    return into
  }
  return plan.select.some((s, i) => {
    if (s.expr.op === 'column' && s.expr.name === s.alias) return false
    const others = new Set<string>()
    plan.select.forEach((o, j) => j !== i && read(o.expr, others))
    read(plan.where, others)
    read(plan.having, others)
    plan.groupBy?.forEach((g) => read(g, others))
    plan.orderBy?.forEach((o) => read(o.expr, others))
    return others.has(s.alias)
  })
}

export function collectColumns(e: Expr, into: Set<string>): void {
  if (e.op === 'column') into.add(e.name)
  for (const v of Object.values(e)) {
    if (Array.isArray(v)) v.flat().forEach((a) => isExpr(a) && collectColumns(a, into))
    else if (isExpr(v)) collectColumns(v, into)
  }
}

/** Plans written into the SELECT of a base plan below them: their new columns and their filters. */
export interface Layers {
  items: SelectItem[]
  where: Expr[]
  /** The plan compiled (its order, limit and offset apply to the merged SELECT). */
  top: Plan
}

/**
 * The base plan under `plan` and the layers above it that can share its SELECT: a layer keeps every
 * column below it under its own name, adds columns (names new to the SELECT and not read by the
 * base, whose aliases would replace them) and may filter; it neither groups, aggregates nor calls
 * windows, and only the top layer orders or limits. The base neither groups, aggregates, orders nor
 * limits (its windows are computed before the layers' filters, as nesting would).
 */
export function flattenLayers(plan: Plan, top: Plan): { base: Plan; items: SelectItem[]; where: Expr[] } {
  const alone = { base: plan, items: [], where: [] }
  if (plan.source.kind !== 'plan') return alone
  if (plan.groupBy?.length || plan.having || (plan !== top && (plan.orderBy?.length || plan.limit !== undefined || plan.offset !== undefined))) return alone
  const below = flattenLayers(plan.source.plan, top)
  const base = below.base
  if (base.groupBy?.length || base.having || base.orderBy?.length || base.limit !== undefined || base.offset !== undefined) return alone
  if (base.select.some((s) => hasAggregate(s.expr)) || shadowsColumn(base)) return alone
  const outputs = new Set([...base.select, ...below.items].map((s) => s.alias))
  const kept = plan.select.filter((s) => s.expr.op === 'column' && s.expr.name === s.alias && outputs.has(s.alias))
  const added = plan.select.filter((s) => !kept.includes(s))
  if (kept.length !== outputs.size) return alone
  const baseReads = new Set<string>()
  base.select.forEach((s) => collectColumns(s.expr, baseReads))
  if (base.where) collectColumns(base.where, baseReads)
  const fresh = (s: SelectItem) => !outputs.has(s.alias) && !baseReads.has(s.alias) && !hasWindow(s.expr) && !hasAggregate(s.expr)
  if (!added.every(fresh) || (plan.where && (hasWindow(plan.where) || hasAggregate(plan.where)))) return alone
  return { base, items: [...below.items, ...added], where: plan.where ? [...below.where, plan.where] : below.where }
}

export function hasAggregate(e: Expr): boolean {
  if (e.op === 'aggregate') return true
  return Object.values(e).some((v) => (Array.isArray(v) ? v.flat().some((a) => isExpr(a) && hasAggregate(a)) : isExpr(v) && hasAggregate(v)))
}

/**
 * A plan over the events with window calls as two plans: the events' expressions the select needs
 * (every largest part without a window, `__e<n>`) with the plan's filter, and the select over them.
 */
export function liftEventExpressions(plan: Plan): Plan {
  const items: SelectItem[] = []
  const names = new Map<string, string>()
  const lift = (e: Expr): Expr => {
    if (hasWindow(e)) return mapChildren(e, lift)
    if (e.op === 'literal' || e.op === 'time') return e
    const key = JSON.stringify(e)
    let name = names.get(key)
    if (!name) {
      name = `__e${items.length}`
      names.set(key, name)
      items.push({ alias: name, expr: e })
    }
    return { op: 'column', name }
  }
  const select = plan.select.map((s) => ({ alias: s.alias, expr: lift(s.expr) }))
  const orderBy = plan.orderBy?.map((o) => ({ ...o, expr: lift(o.expr) }))
  const inner: Plan = { source: { kind: 'events' }, select: items.length ? items : [{ alias: '__e0', expr: { op: 'literal', value: 0 } }], where: plan.where }
  return { source: { kind: 'plan', plan: inner }, select, orderBy, limit: plan.limit, offset: plan.offset }
}

/** The expression with each direct sub-expression (in lists, pairs and order items too) replaced by `f` of it. */
export function mapChildren(e: Expr, f: (e: Expr) => Expr): Expr {
  const map = (v: unknown): unknown => {
    if (isExpr(v)) return f(v)
    if (Array.isArray(v)) return v.map(map)
    if (typeof v === 'object' && v !== null && isExpr((v as { expr?: unknown }).expr)) return { ...v, expr: f((v as { expr: Expr }).expr) }
    return v
  }
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k, map(v)])) as Expr
}
