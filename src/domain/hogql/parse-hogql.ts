import { HOGQL_TABLES, type FromItem, type HogQLExpr, type HogQLSelect, type JoinItem, type OrderItem, type SelectItem } from './hogql-ast.ts'
import { isReserved, TokenCursor } from './hogql-cursor.ts'
import { hogqlError } from './hogql-error.ts'
import { tokenize } from './hogql-lexer.ts'
import { parseExpr, type ExprContext } from './parse-hogql-expr.ts'

/** Clauses a SELECT may not carry here, with why (checked where a clause would start). */
const REFUSED_CLAUSES: Record<string, string> = {
  settings: 'SETTINGS clauses are not allowed.',
  format: 'FORMAT clauses are not allowed.',
  union: 'UNION is not supported: run the queries separately.',
  except: 'EXCEPT is not supported.',
  intersect: 'INTERSECT is not supported.',
  into: 'SELECT ... INTO is not allowed.',
  window: 'Window functions are not supported.',
  prewhere: 'PREWHERE is not supported: use WHERE.',
  sample: 'SAMPLE is not supported.',
  final: 'FINAL is not supported.',
  array: 'ARRAY JOIN is not supported.',
}

/**
 * Parses one HogQL SELECT (PostHog's grammar, `posthog/hogql/grammar/HogQLParser.g4`, the subset
 * Tally runs) into a tree. Anything else is a 400 naming what was refused: other statements
 * (`ATTACH`, `COPY`, `SET`, `PRAGMA`, `DROP`...), more than one statement, unknown tables, table
 * functions and files, functions outside the allow-list, SETTINGS.
 */
export function parseHogQL(text: string, values: Readonly<Record<string, unknown>> = {}): HogQLSelect {
  const cursor = new TokenCursor(tokenize(text))
  const ctx: ExprContext = { cursor, values, depth: 0, parseSelect: () => parseSelect(ctx) }
  const first = cursor.peek()
  if (!cursor.isKeyword('select')) {
    if (cursor.isKeyword('with')) throw hogqlError('WITH (common table expressions) is not supported: use a subquery in FROM.')
    const what = first.type === 'eof' ? 'an empty query' : `"${first.value}"`
    throw hogqlError(`Only SELECT queries are allowed, found ${what}.`)
  }
  const query = parseSelect(ctx)
  const ended = cursor.acceptOp(';')
  if (cursor.peek().type !== 'eof') {
    if (ended) throw hogqlError('Only one statement is allowed: remove what follows ";".')
    throw refusedOrUnexpected(cursor)
  }
  return query
}

/** Parses one HogQL expression (an EventsQuery `where` entry): the whole text must be the expression. */
export function parseHogQLExpr(text: string): HogQLExpr {
  const cursor = new TokenCursor(tokenize(text))
  const ctx: ExprContext = { cursor, values: {}, depth: 0, parseSelect: () => parseSelect(ctx) }
  if (cursor.peek().type === 'eof') throw hogqlError('The expression is empty.')
  const expr = parseExpr(ctx)
  if (cursor.peek().type !== 'eof') throw cursor.unexpected('the end of the expression')
  return expr
}

function parseSelect(ctx: ExprContext): HogQLSelect {
  const c = ctx.cursor
  c.expectKeyword('select')
  const distinct = c.acceptKeyword('distinct')
  const select: SelectItem[] = []
  do select.push(parseSelectItem(ctx))
  while (c.acceptOp(','))
  const query: HogQLSelect = { distinct, select, from: null, joins: [], where: null, groupBy: [], having: null, orderBy: [], limit: null, offset: null }
  if (c.acceptKeyword('from')) {
    query.from = parseFromItem(ctx)
    query.joins = parseJoins(ctx)
  }
  if (c.acceptKeyword('where')) query.where = parseExpr(ctx)
  if (c.acceptKeyword('group')) {
    c.expectKeyword('by')
    query.groupBy = exprList(ctx)
  }
  if (c.acceptKeyword('having')) query.having = parseExpr(ctx)
  if (c.acceptKeyword('order')) {
    c.expectKeyword('by')
    query.orderBy = parseOrderBy(ctx)
  }
  if (c.acceptKeyword('limit')) {
    const first = wholeNumber(ctx, 'LIMIT')
    if (c.acceptOp(',')) {
      query.offset = first
      query.limit = wholeNumber(ctx, 'LIMIT')
    } else query.limit = first
    if (c.isKeyword('by')) throw hogqlError('LIMIT ... BY is not supported.')
    if (c.isKeyword('with')) throw hogqlError('LIMIT ... WITH TIES is not supported.')
  }
  if (c.acceptKeyword('offset')) query.offset = wholeNumber(ctx, 'OFFSET')
  const next = c.peek()
  if (next.type === 'ident' && Object.hasOwn(REFUSED_CLAUSES, next.value.toLowerCase())) throw refusedOrUnexpected(c)
  return query
}

function parseSelectItem(ctx: ExprContext): SelectItem {
  const expr = parseExpr(ctx)
  return { expr, alias: parseAlias(ctx) }
}

/** `AS name`, or a bare name that is not a keyword. */
function parseAlias(ctx: ExprContext): string | null {
  const c = ctx.cursor
  if (c.acceptKeyword('as')) {
    const t = c.next()
    if (t.type !== 'ident' && t.type !== 'quoted') throw hogqlError(`Expected a name after AS, found "${t.value}".`)
    return t.value
  }
  const t = c.peek()
  if (t.type === 'quoted' || (t.type === 'ident' && !isReserved(t.value))) return c.next().value
  return null
}

function parseFromItem(ctx: ExprContext): FromItem {
  const c = ctx.cursor
  const t = c.peek()
  if (c.acceptOp('(')) {
    if (!c.isKeyword('select')) throw c.unexpected('SELECT')
    const query = parseSelect(ctx)
    c.expectOp(')')
    return { kind: 'subquery', query, alias: parseAlias(ctx) }
  }
  if (t.type === 'string') throw hogqlError(`Reading files is not allowed ('${t.value}'): HogQL reads the tables ${HOGQL_TABLES.join(', ')}.`)
  if (t.type !== 'ident' && t.type !== 'quoted') throw c.unexpected('a table')
  const parts = [c.next().value]
  while (c.acceptOp('.')) parts.push(c.next().value)
  const name = parts.join('.')
  if (c.isOp('(')) throw hogqlError(`Table functions are not allowed ("${name}(...)"): HogQL reads the tables ${HOGQL_TABLES.join(', ')}.`)
  if (!(HOGQL_TABLES as readonly string[]).includes(name)) throw hogqlError(`Unknown table "${name}": HogQL reads the project's tables ${HOGQL_TABLES.join(', ')}.`)
  return { kind: 'table', name, alias: parseAlias(ctx) }
}

function parseJoins(ctx: ExprContext): JoinItem[] {
  const c = ctx.cursor
  const joins: JoinItem[] = []
  for (;;) {
    let type: JoinItem['type'] | null = null
    if (c.isKeyword('join')) type = 'inner'
    else if (c.isKeyword('inner') && c.isKeyword('join', 1)) type = 'inner'
    else if (c.isKeyword('left') && (c.isKeyword('join', 1) || (c.isKeyword('outer', 1) && c.isKeyword('join', 2)))) type = 'left'
    else if (c.isOp(',') || ['right', 'full', 'cross', 'any', 'all', 'semi', 'anti', 'asof', 'global', 'paste'].some((w) => c.isKeyword(w))) {
      throw hogqlError(`Only [INNER] JOIN and LEFT [OUTER] JOIN ... ON are supported, found "${c.peek().value}".`)
    }
    if (!type) return joins
    while (!c.acceptKeyword('join')) c.next()
    const from = parseFromItem(ctx)
    if (c.isKeyword('using')) throw hogqlError('JOIN ... USING is not supported: write JOIN ... ON.')
    c.expectKeyword('on')
    joins.push({ type, from, on: parseExpr(ctx) })
  }
}

function parseOrderBy(ctx: ExprContext): OrderItem[] {
  const c = ctx.cursor
  const items: OrderItem[] = []
  do {
    const expr = parseExpr(ctx)
    const desc = c.acceptKeyword('desc') || c.acceptKeyword('descending')
    if (!desc && !c.acceptKeyword('asc')) c.acceptKeyword('ascending')
    if (c.isKeyword('nulls')) throw hogqlError('NULLS FIRST/LAST is not supported.')
    items.push({ expr, desc })
  } while (c.acceptOp(','))
  return items
}

function exprList(ctx: ExprContext): HogQLExpr[] {
  const items: HogQLExpr[] = []
  do items.push(parseExpr(ctx))
  while (ctx.cursor.acceptOp(','))
  return items
}

function wholeNumber(ctx: ExprContext, clause: string): number {
  const e = parseExpr(ctx)
  if (e.kind === 'constant' && typeof e.value === 'number' && Number.isSafeInteger(e.value) && e.value >= 0) return e.value
  throw hogqlError(`${clause} takes a whole number.`)
}

function refusedOrUnexpected(c: TokenCursor) {
  const t = c.peek()
  const why = t.type === 'ident' ? REFUSED_CLAUSES[t.value.toLowerCase()] : undefined
  return why ? hogqlError(why) : c.unexpected()
}
