import type { FromItem, HogQLExpr, HogQLSelect } from './hogql-ast.ts'

const PLAIN = /^[A-Za-z_$][A-Za-z0-9_$]*$/

const name = (n: string): string => (PLAIN.test(n) ? n : `\`${n.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``)
const str = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

// Printed in parentheses inside another expression, so precedence reads as it parsed.
const COMPOUND = new Set<HogQLExpr['kind']>(['arithmetic', 'compare', 'and', 'or', 'between', 'is_null', 'not'])

/** An expression as normalised HogQL text (what PostHog shows as a column's name and in `hogql`). */
export function printExpr(e: HogQLExpr): string {
  const p = (x: HogQLExpr): string => (COMPOUND.has(x.kind) ? `(${printExpr(x)})` : printExpr(x))
  switch (e.kind) {
    case 'constant':
      return e.value === null ? 'NULL' : typeof e.value === 'string' ? str(e.value) : String(e.value)
    case 'field':
      return e.chain.map(name).join('.')
    case 'star':
      return e.table ? `${name(e.table)}.*` : '*'
    case 'call': {
      const params = e.params ? `(${e.params.map(printExpr).join(', ')})` : ''
      return `${e.name}${params}(${e.distinct ? 'DISTINCT ' : ''}${e.args.map(printExpr).join(', ')})`
    }
    case 'arithmetic':
      return `${p(e.left)} ${e.op} ${p(e.right)}`
    case 'compare':
      return `${p(e.left)} ${e.op.toUpperCase()} ${p(e.right)}`
    case 'and':
    case 'or':
      return e.args.map(p).join(e.kind === 'and' ? ' AND ' : ' OR ')
    case 'not':
      return `NOT ${p(e.arg)}`
    case 'negate':
      return `-${p(e.arg)}`
    case 'is_null':
      return `${p(e.arg)} IS ${e.negated ? 'NOT ' : ''}NULL`
    case 'between':
      return `${p(e.arg)} ${e.negated ? 'NOT ' : ''}BETWEEN ${p(e.low)} AND ${p(e.high)}`
    case 'case': {
      const whens = e.when.map(([c, v]) => ` WHEN ${printExpr(c)} THEN ${printExpr(v)}`).join('')
      return `CASE${e.subject ? ` ${printExpr(e.subject)}` : ''}${whens}${e.else ? ` ELSE ${printExpr(e.else)}` : ''} END`
    }
    case 'interval':
      return `INTERVAL ${p(e.value)} ${e.unit}`
    case 'tuple':
      return `(${e.items.map(printExpr).join(', ')})`
    case 'array':
      return `[${e.items.map(printExpr).join(', ')}]`
    case 'subquery':
      return `(${printSelect(e.query)})`
  }
}

function printFrom(f: FromItem): string {
  const alias = f.alias ? ` AS ${name(f.alias)}` : ''
  return f.kind === 'table' ? `${f.name}${alias}` : `(${printSelect(f.query)})${alias}`
}

/** A SELECT as normalised HogQL text (the `hogql` field of the response). */
export function printSelect(q: HogQLSelect): string {
  let out = `SELECT ${q.distinct ? 'DISTINCT ' : ''}${q.select.map((s) => printExpr(s.expr) + (s.alias ? ` AS ${name(s.alias)}` : '')).join(', ')}`
  if (q.from) out += ` FROM ${printFrom(q.from)}`
  for (const j of q.joins) out += ` ${j.type === 'left' ? 'LEFT' : 'INNER'} JOIN ${printFrom(j.from)} ON ${printExpr(j.on)}`
  if (q.where) out += ` WHERE ${printExpr(q.where)}`
  if (q.groupBy.length) out += ` GROUP BY ${q.groupBy.map(printExpr).join(', ')}`
  if (q.having) out += ` HAVING ${printExpr(q.having)}`
  if (q.orderBy.length) out += ` ORDER BY ${q.orderBy.map((o) => `${printExpr(o.expr)} ${o.desc ? 'DESC' : 'ASC'}`).join(', ')}`
  if (q.limit !== null) out += ` LIMIT ${q.limit}`
  if (q.offset !== null) out += ` OFFSET ${q.offset}`
  return out
}

/**
 * The name PostHog gives a selected column: its alias, a column's own name (`e.event` is `event`),
 * or the expression's text (`count()`, `properties.$browser`), as `posthog/hogql/query.py` prints it.
 */
export function columnName(item: { expr: HogQLExpr; alias: string | null }): string {
  if (item.alias) return item.alias
  const e = item.expr
  if (e.kind === 'field' && !e.chain.slice(0, -1).includes('properties')) return e.chain[e.chain.length - 1]!
  return printExpr(e)
}
