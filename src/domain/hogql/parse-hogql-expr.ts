import type { CompareOp, HogQLConstant, HogQLExpr, HogQLSelect, IntervalUnit } from './hogql-ast.ts'
import { isReserved, type TokenCursor } from './hogql-cursor.ts'
import { hogqlError } from './hogql-error.ts'
import { checkCall, lookupFunction } from './hogql-functions.ts'
import { lookupTable } from '../../shared/lookup-table.ts'

export interface ExprContext {
  cursor: TokenCursor
  /** Parses `SELECT ...` at the cursor (for subqueries inside expressions). */
  parseSelect(): HogQLSelect
  /** Values of `{name}` placeholders. */
  values: Readonly<Record<string, unknown>>
  /** Nesting depth, bounded so a hostile query cannot exhaust the stack. */
  depth: number
}

const MAX_DEPTH = 200
const COMPARE = lookupTable<CompareOp>({ '=': '=', '==': '=', '!=': '!=', '<>': '!=', '<': '<', '<=': '<=', '>': '>', '>=': '>=' })
const UNITS = Object.create(null) as Record<string, IntervalUnit | undefined>
for (const u of ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'] as const) {
  UNITS[u] = u
  UNITS[`${u}s`] = u
}

/**
 * One expression, by ClickHouse's precedence (loosest first): OR, AND, NOT, comparisons (`=`, LIKE,
 * IN, BETWEEN, IS NULL), `+ - ||`, `* / %`, unary minus, then fields, calls and literals.
 */
export function parseExpr(ctx: ExprContext): HogQLExpr {
  if (++ctx.depth > MAX_DEPTH) throw hogqlError('The query is nested too deeply.')
  try {
    return parseOr(ctx)
  } finally {
    ctx.depth--
  }
}

function parseOr(ctx: ExprContext): HogQLExpr {
  const args = [parseAnd(ctx)]
  while (ctx.cursor.acceptKeyword('or')) args.push(parseAnd(ctx))
  return args.length === 1 ? args[0]! : { kind: 'or', args }
}

function parseAnd(ctx: ExprContext): HogQLExpr {
  const args = [parseNot(ctx)]
  while (ctx.cursor.acceptKeyword('and')) args.push(parseNot(ctx))
  return args.length === 1 ? args[0]! : { kind: 'and', args }
}

function parseNot(ctx: ExprContext): HogQLExpr {
  if (ctx.cursor.acceptKeyword('not')) return { kind: 'not', arg: parseNot(ctx) }
  return parseComparison(ctx)
}

function parseComparison(ctx: ExprContext): HogQLExpr {
  const c = ctx.cursor
  const left = parseAdditive(ctx)
  const t = c.peek()
  if (t.type === 'op' && COMPARE[t.value]) {
    c.next()
    return { kind: 'compare', op: COMPARE[t.value]!, left, right: parseAdditive(ctx) }
  }
  if (c.acceptKeyword('is')) {
    const negated = c.acceptKeyword('not')
    c.expectKeyword('null')
    return { kind: 'is_null', arg: left, negated }
  }
  const negated = c.isKeyword('not') && (c.isKeyword('like', 1) || c.isKeyword('ilike', 1) || c.isKeyword('in', 1) || c.isKeyword('between', 1))
  if (negated) c.next()
  if (c.acceptKeyword('like')) return { kind: 'compare', op: negated ? 'not like' : 'like', left, right: parseAdditive(ctx) }
  if (c.acceptKeyword('ilike')) return { kind: 'compare', op: negated ? 'not ilike' : 'ilike', left, right: parseAdditive(ctx) }
  if (c.acceptKeyword('in')) return { kind: 'compare', op: negated ? 'not in' : 'in', left, right: parseAdditive(ctx) }
  if (c.acceptKeyword('between')) {
    const low = parseAdditive(ctx)
    c.expectKeyword('and')
    return { kind: 'between', arg: left, low, high: parseAdditive(ctx), negated }
  }
  return left
}

function parseAdditive(ctx: ExprContext): HogQLExpr {
  let left = parseMultiplicative(ctx)
  for (;;) {
    const op = ['+', '-', '||'].find((o) => ctx.cursor.isOp(o)) as '+' | '-' | '||' | undefined
    if (!op) return left
    ctx.cursor.next()
    left = { kind: 'arithmetic', op, left, right: parseMultiplicative(ctx) }
  }
}

function parseMultiplicative(ctx: ExprContext): HogQLExpr {
  let left = parseUnary(ctx)
  for (;;) {
    const op = ['*', '/', '%'].find((o) => ctx.cursor.isOp(o)) as '*' | '/' | '%' | undefined
    if (!op) return left
    ctx.cursor.next()
    left = { kind: 'arithmetic', op, left, right: parseUnary(ctx) }
  }
}

function parseUnary(ctx: ExprContext): HogQLExpr {
  if (ctx.cursor.acceptOp('-')) {
    const arg = parseUnary(ctx)
    if (arg.kind !== 'constant' || typeof arg.value !== 'number') return { kind: 'negate', arg }
    return arg.digits === undefined ? { kind: 'constant', value: -arg.value } : { kind: 'constant', value: -arg.value, digits: (-BigInt(arg.digits)).toString() }
  }
  if (ctx.cursor.acceptOp('+')) return parseUnary(ctx)
  const expr = parsePrimary(ctx)
  if (ctx.cursor.isOp('::')) throw hogqlError('Casts with "::" are not supported: use toString(), toInt(), toFloat(), toDate() or toDateTime().')
  if (ctx.cursor.isOp('?')) throw hogqlError('The ternary operator "?:" is not supported: use if(cond, then, else).')
  return expr
}

function parsePrimary(ctx: ExprContext): HogQLExpr {
  const c = ctx.cursor
  const t = c.peek()
  if (t.type === 'number' || t.type === 'string' || t.type === 'placeholder') {
    c.next()
    const value = t.type === 'number' ? parseNumber(t.value) : t.type === 'string' ? t.value : placeholderValue(ctx, t.value)
    // An integer past 2^53 keeps its exact digits: 9223372036854775807 is Int64's maximum, not 2^63.
    if (t.type === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) && /^(0x[0-9a-f]+|\d+)$/i.test(t.value)) {
      return { kind: 'constant', value, digits: BigInt(t.value).toString() }
    }
    return { kind: 'constant', value }
  }
  if (c.acceptOp('*')) return { kind: 'star', table: null }
  if (c.acceptOp('(')) {
    if (c.isKeyword('select')) {
      const query = ctx.parseSelect()
      c.expectOp(')')
      return { kind: 'subquery', query }
    }
    const items = list(ctx, ')')
    if (items.length === 0) throw c.unexpected('an expression')
    return items.length === 1 ? items[0]! : { kind: 'tuple', items }
  }
  if (c.acceptOp('[')) return { kind: 'array', items: list(ctx, ']') }
  if (t.type === 'ident') {
    const word = t.value.toLowerCase()
    if (word === 'true' || word === 'false' || word === 'null') {
      c.next()
      return { kind: 'constant', value: word === 'null' ? null : word === 'true' }
    }
    if (word === 'case') return parseCase(ctx)
    if (word === 'interval') return parseInterval(ctx)
    if (c.isOp('(', 1)) return parseCall(ctx)
    if (isReserved(word)) throw c.unexpected('an expression')
  }
  if (t.type === 'ident' || t.type === 'quoted') return parseField(ctx)
  throw c.unexpected('an expression')
}

/** `a.b.c`, `a['b']`, `alias.*`. */
function parseField(ctx: ExprContext): HogQLExpr {
  const c = ctx.cursor
  const chain = [c.next().value]
  for (;;) {
    if (c.acceptOp('.')) {
      if (c.acceptOp('*')) {
        if (chain.length !== 1) throw hogqlError(`"${chain.join('.')}.*" is not a table.`)
        return { kind: 'star', table: chain[0]! }
      }
      const t = c.next()
      if (t.type !== 'ident' && t.type !== 'quoted' && t.type !== 'number') throw hogqlError(`Expected a name after "${chain.join('.')}.", found "${t.value}".`)
      chain.push(t.value)
    } else if (c.acceptOp('[')) {
      const t = c.next()
      if (t.type !== 'string' && t.type !== 'number') throw hogqlError(`Only constant keys are supported in "${chain.join('.')}[...]".`)
      c.expectOp(']')
      chain.push(t.value)
    } else {
      return { kind: 'field', chain }
    }
  }
}

function parseCall(ctx: ExprContext): HogQLExpr {
  const c = ctx.cursor
  const written = c.next().value
  const name = lookupFunction(written)
  c.expectOp('(')
  const distinct = c.acceptKeyword('distinct')
  let args = list(ctx, ')')
  let params: HogQLExpr[] | null = null
  if (c.acceptOp('(')) {
    params = args
    args = list(ctx, ')')
  }
  if (distinct && !['count', 'sum', 'avg'].includes(name)) throw hogqlError(`DISTINCT is not supported inside "${name}()".`)
  if (c.isKeyword('over')) throw hogqlError('Window functions (OVER) are not supported.')
  // count(*) is count().
  if (name === 'count' && args.length === 1 && args[0]!.kind === 'star' && args[0]!.table === null) args = []
  checkCall(name, args.length, params?.length ?? null)
  return { kind: 'call', name, args, params, distinct }
}

function parseCase(ctx: ExprContext): HogQLExpr {
  const c = ctx.cursor
  c.expectKeyword('case')
  const subject = c.isKeyword('when') ? null : parseExpr(ctx)
  const when: Array<[HogQLExpr, HogQLExpr]> = []
  while (c.acceptKeyword('when')) {
    const cond = parseExpr(ctx)
    c.expectKeyword('then')
    when.push([cond, parseExpr(ctx)])
  }
  if (when.length === 0) throw c.unexpected('WHEN')
  const otherwise = c.acceptKeyword('else') ? parseExpr(ctx) : null
  c.expectKeyword('end')
  return { kind: 'case', subject, when, else: otherwise }
}

/** `interval 7 day`, `interval '7 day'`, `interval {n} day`. */
function parseInterval(ctx: ExprContext): HogQLExpr {
  const c = ctx.cursor
  c.expectKeyword('interval')
  const t = c.peek()
  if (t.type === 'string') {
    c.next()
    const m = /^\s*(\d+)\s+([a-z]+)\s*$/i.exec(t.value)
    const unit = m && UNITS[m[2]!.toLowerCase()]
    if (!m || !unit) throw hogqlError(`Invalid interval '${t.value}': write interval 7 day.`)
    return { kind: 'interval', value: { kind: 'constant', value: Number(m[1]) }, unit }
  }
  const value = parseUnary(ctx)
  const u = c.next()
  const unit = u.type === 'ident' ? UNITS[u.value.toLowerCase()] : undefined
  if (!unit) throw hogqlError(`Expected an interval unit (second, minute, hour, day, week, month, quarter, year), found "${u.value}".`)
  return { kind: 'interval', value, unit }
}

function list(ctx: ExprContext, close: string): HogQLExpr[] {
  const items: HogQLExpr[] = []
  if (ctx.cursor.acceptOp(close)) return items
  do items.push(parseExpr(ctx))
  while (ctx.cursor.acceptOp(','))
  ctx.cursor.expectOp(close)
  return items
}

function parseNumber(text: string): number {
  const n = /^0x/i.test(text) ? parseInt(text, 16) : Number(text)
  if (!Number.isFinite(n)) throw hogqlError(`Invalid number ${text}.`)
  return n
}

function placeholderValue(ctx: ExprContext, name: string): HogQLConstant {
  if (!Object.hasOwn(ctx.values, name)) throw hogqlError(`Placeholder {${name}} has no value in "values".`)
  const v = ctx.values[name]
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return v
  throw hogqlError(`Placeholder {${name}} must be a string, number, boolean or null.`)
}
