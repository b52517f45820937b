import type { FromItem, HogQLExpr, HogQLSelect, SelectItem } from '../../../domain/hogql/hogql-ast.ts'
import { hogqlError } from '../../../domain/hogql/hogql-error.ts'
import { columnName, printExpr } from '../../../domain/hogql/print-hogql.ts'
import type { HogQLDialect } from './hogql-dialect.ts'
import type { ExprScope, HType, Typed } from './hogql-sql-types.ts'
import { HOGQL_TABLES, type TableContext, type TableRef } from './hogql-tables.ts'
import { translateExpr } from './translate-hogql-expr.ts'

export interface HogQLTranslation {
  sql: string
  values: (string | number | boolean)[]
  /** The result's column names, as PostHog names them. */
  columns: string[]
  types: HType[]
}

interface Translation extends TableContext {
  timeZone: string
  now: Date
  params: ExprScope['params']
  nextAlias: () => string
}

/**
 * Translates a parsed HogQL SELECT into one statement of the engine's dialect over the project's own
 * rows: every table read (in FROM, joins and subqueries at any depth) is a relation filtered to the
 * project, fields resolve only to known columns, functions only through the allow-list, and every
 * client value goes through the dialect's parameters. Top-level columns come out as `c0`, `c1`... in order.
 */
export function translateHogQL(query: HogQLSelect, dialect: HogQLDialect, opts: { projectId: number; timeZone: string; now: Date }): HogQLTranslation {
  const params = dialect.createParams()
  let aliases = 0
  const t: Translation = { dialect, projectId: opts.projectId, timeZone: opts.timeZone, now: opts.now, params, nextAlias: () => `t${++aliases}` }
  const out = translateSelect(query, t, true)
  return { sql: out.sql, values: params.values, columns: out.columns.map((c) => c.name), types: out.columns.map((c) => c.type) }
}

interface SelectOut {
  sql: string
  columns: Array<{ name: string; type: HType }>
}

function translateSelect(q: HogQLSelect, t: Translation, topLevel: boolean): SelectOut {
  const tables: TableRef[] = []
  const fromSql: Array<() => string> = []
  const addFrom = (f: FromItem): TableRef => {
    const table = fromItem(f, t)
    if (tables.some((x) => x.name === table.name)) throw hogqlError(`Table name "${table.name}" is used twice: give each an alias.`)
    tables.push(table)
    return table
  }
  const aliasExprs = new Map(q.select.filter((s) => s.alias).map((s) => [s.alias!, s.expr]))
  const expanding = new Set<string>()
  const scope: ExprScope = {
    dialect: t.dialect,
    params: t.params,
    timeZone: t.timeZone,
    now: t.now,
    field: (chain) => resolveField(chain, tables, t, scope, aliasExprs, expanding),
    subquery: (sub) => {
      const inner = translateSelect(sub, t, false)
      return { sql: `(${inner.sql})`, type: inner.columns[0]?.type ?? 'unknown' }
    },
  }
  const subquerySql = new Map<TableRef, string>()
  if (q.from) {
    const first = addFrom(q.from)
    if (q.from.kind === 'subquery') subquerySql.set(first, subqueryOf(q.from, t, first))
    fromSql.push(() => relation(first, t, subquerySql))
  }
  for (const j of q.joins) {
    const table = addFrom(j.from)
    if (j.from.kind === 'subquery') subquerySql.set(table, subqueryOf(j.from, t, table))
    const on = translateExpr(j.on, scope).sql
    const kind = j.type === 'left' ? 'left' : 'inner'
    fromSql.push(() => ` ${t.dialect.join(kind, relation(table, t, subquerySql), on)}`)
  }

  const items = expandStars(q.select, tables)
  const selected = items.map((item, i) => {
    const v = item.alias ? expandAlias(item.alias, item.expr, scope, expanding) : translateExpr(item.expr, scope)
    const name = columnName(item)
    return { sql: `${v.sql} AS ${t.dialect.quote(topLevel ? `c${i}` : name)}`, alias: topLevel ? `c${i}` : name, name, type: v.type }
  })
  for (const ref of tables) ref.table?.narrow?.(ref, q.where, tables.length === 1)
  const where = q.where ? translateExpr(q.where, scope).sql : null
  const positionOf = (e: HogQLExpr, clause: string): string => {
    if (e.kind === 'constant' && typeof e.value === 'number') {
      if (!Number.isSafeInteger(e.value) || e.value < 1 || e.value > items.length) throw hogqlError(`${clause} ${e.value} is not a column of the select list.`)
      return t.dialect.selectedRef(e.value, t.dialect.quote(selected[e.value - 1]!.alias))
    }
    const text = printExpr(e)
    const at = items.findIndex((item) => (e.kind === 'field' && e.chain.length === 1 && item.alias === e.chain[0]) || printExpr(item.expr) === text)
    return at >= 0 ? t.dialect.selectedRef(at + 1, t.dialect.quote(selected[at]!.alias)) : translateExpr(e, scope).sql
  }
  const groupBy = q.groupBy.map((e) => positionOf(e, 'GROUP BY'))
  const having = q.having ? translateExpr(q.having, scope).sql : null
  const orderBy = q.orderBy.map((o) => `${positionOf(o.expr, 'ORDER BY')}${o.desc ? ' DESC' : ' ASC'}`)

  let sql = `SELECT ${q.distinct ? 'DISTINCT ' : ''}${selected.map((s) => s.sql).join(', ')}`
  if (fromSql.length) sql += ` FROM ${fromSql.map((f) => f()).join('')}`
  if (where) sql += ` WHERE ${where}`
  if (groupBy.length) sql += ` GROUP BY ${groupBy.join(', ')}`
  if (having) sql += ` HAVING ${having}`
  if (orderBy.length) sql += ` ORDER BY ${orderBy.join(', ')}`
  if (q.limit !== null) sql += ` LIMIT ${whole(q.limit)}`
  if (q.offset !== null) sql += ` OFFSET ${whole(q.offset)}`
  return { sql, columns: selected.map((s) => ({ name: s.name, type: s.type })) }
}

function fromItem(f: FromItem, t: Translation): TableRef {
  const sqlAlias = t.nextAlias()
  if (f.kind === 'table') {
    const table = HOGQL_TABLES.get(f.name)
    if (!table) throw hogqlError(`Unknown table "${f.name}" (tables: ${[...HOGQL_TABLES.keys()].join(', ')}).`)
    return { name: f.alias ?? f.name, sqlAlias, table, columns: new Map(Object.entries(table.fields)), needsPerson: false, sessionColumns: new Set() }
  }
  // Columns are filled when the subquery is translated (subqueryOf).
  return { name: f.alias ?? sqlAlias, sqlAlias, columns: new Map(), needsPerson: false, sessionColumns: new Set() }
}

function subqueryOf(f: Extract<FromItem, { kind: 'subquery' }>, t: Translation, table: TableRef): string {
  const inner = translateSelect(f.query, t, false)
  for (const c of inner.columns) table.columns.set(c.name, c.type)
  return inner.sql
}

function relation(ref: TableRef, t: Translation, subquerySql: Map<TableRef, string>): string {
  if (ref.table) return ref.table.relation(ref, t)
  return `(${subquerySql.get(ref)!}) AS ${ref.sqlAlias}`
}

/** `*` and `alias.*` as the fields they stand for. */
function expandStars(select: SelectItem[], tables: TableRef[]): SelectItem[] {
  return select.flatMap((item) => {
    if (item.expr.kind !== 'star') return [item]
    const table = item.expr.table
    const from = table === null ? tables : tables.filter((x) => x.name === table)
    if (from.length === 0) throw hogqlError(table === null ? 'SELECT * needs a FROM.' : `Unknown table "${table}" in "${table}.*".`)
    return from.flatMap((x) => {
      const names = x.table ? [...x.table.star] : [...x.columns.keys()]
      return names.map((n): SelectItem => ({ expr: { kind: 'field', chain: tables.length > 1 ? [x.name, n] : [n] }, alias: null }))
    })
  })
}

function expandAlias(alias: string, expr: HogQLExpr, scope: ExprScope, expanding: Set<string>): Typed {
  expanding.add(alias)
  try {
    return translateExpr(expr, scope)
  } finally {
    expanding.delete(alias)
  }
}

/** A field: `table.field...`, a select alias, or the first table in FROM order that has it. */
function resolveField(chain: readonly string[], tables: TableRef[], t: Translation, scope: ExprScope, aliases: Map<string, HogQLExpr>, expanding: Set<string>): Typed {
  const [head, ...rest] = chain
  const named = chain.length > 1 ? tables.find((x) => x.name === head) : undefined
  if (named) return fieldOf(named, rest, t)
  if (chain.length === 1 && aliases.has(head!) && !expanding.has(head!)) return expandAlias(head!, aliases.get(head!)!, scope, expanding)
  const table = tables.find((x) => x.columns.has(head!) || x.table?.owns(head!))
  if (!table) {
    if (tables.length === 0) throw hogqlError(`Unknown field "${chain.join('.')}": the query has no FROM.`)
    if (tables.length === 1 && tables[0]!.table) return fieldOf(tables[0]!, chain, t)
    throw hogqlError(`Unknown field "${chain.join('.')}" (tables in scope: ${tables.map((x) => x.name).join(', ')}).`)
  }
  return fieldOf(table, chain, t)
}

function fieldOf(table: TableRef, chain: readonly string[], t: Translation): Typed {
  if (table.table) return table.table.field(table, chain, t)
  const [name, ...rest] = chain
  const type = table.columns.get(name!)
  if (type === undefined) throw hogqlError(`Unknown field "${chain.join('.')}" on "${table.name}": its columns are ${[...table.columns.keys()].join(', ')}.`)
  if (rest.length > 0) throw hogqlError(`Field "${name}" of "${table.name}" has no "${rest.join('.')}".`)
  return { sql: `${table.sqlAlias}.${t.dialect.quote(name!)}`, type }
}

function whole(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw hogqlError(`LIMIT and OFFSET take whole numbers.`)
  return n
}
