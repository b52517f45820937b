import type { HogQLExpr } from '../hogql/hogql-ast.ts'
import { parseHogQLExpr } from '../hogql/parse-hogql.ts'
import { AppError, validationError } from '../../shared/errors.ts'
import { and, bin, col, lit, type BinaryFn, type Expr } from './query-plan.ts'

/**
 * An EventsQuery `where` entry (HogQL text, as PostHog's events table sends them: `event = 'signup'`,
 * `properties.plan = 'pro'`, `timestamp > '2024-01-01'`) as a plan expression over the events. The
 * expression is parsed by the HogQL parser and translated here, engine-neutral, for the forms a row
 * filter of the events table takes: fields of the event (`event`, `distinct_id`, `uuid`, `timestamp`,
 * `person_id`, `properties.<key>`, `person.properties.<key>`), constants, comparisons, `IN` lists,
 * `BETWEEN`, `IS [NOT] NULL`, `AND`/`OR`/`NOT`. Anything else is a 400 naming `attr`; a HogQLQuery runs
 * the rest of HogQL.
 */
export function hogqlWhereExpr(text: string, attr: string): Expr {
  let parsed: HogQLExpr
  try {
    parsed = parseHogQLExpr(text)
  } catch (err) {
    if (err instanceof AppError) throw validationError(attr, err.message, 'invalid_input')
    throw err
  }
  return condition(parsed, attr)
}

type Value = { expr: Expr; kind: 'text' | 'time' | 'number' | 'constant' | 'other'; constant?: unknown }

const COMPARE: Record<string, BinaryFn> = { '=': '=', '!=': '!=', '<': '<', '<=': '<=', '>': '>', '>=': '>=' }
const unsupported = (attr: string, what: string) =>
  validationError(attr, `${what} is not supported in an EventsQuery where clause: use fields, properties.<key>, constants, comparisons, IN, BETWEEN, IS NULL, AND, OR and NOT, or a HogQLQuery.`, 'invalid_input')

function condition(e: HogQLExpr, attr: string): Expr {
  switch (e.kind) {
    case 'and':
    case 'or':
      return { op: e.kind, args: e.args.map((a) => condition(a, attr)) }
    case 'not':
      return { op: 'not', arg: condition(e.arg, attr) }
    case 'is_null': {
      const isNull: Expr = { op: 'is_null', arg: value(e.arg, attr).expr }
      return e.negated ? { op: 'not', arg: isNull } : isNull
    }
    case 'between': {
      const within = and(compare('>=', e.arg, e.low, attr), compare('<=', e.arg, e.high, attr))!
      return e.negated ? { op: 'not', arg: within } : within
    }
    case 'compare': {
      if (e.op === 'in' || e.op === 'not in') {
        const items = e.right.kind === 'tuple' || e.right.kind === 'array' ? e.right.items : [e.right]
        const values = items.map((i) => {
          if (i.kind !== 'constant' || (typeof i.value !== 'string' && typeof i.value !== 'number')) throw unsupported(attr, 'An IN list of anything but text and number constants')
          return i.value
        })
        const left = value(e.left, attr)
        const numeric = values.every((v) => typeof v === 'number')
        const inList: Expr = { op: 'in', arg: numeric && left.kind === 'text' ? { op: 'to_number', arg: left.expr } : left.expr, values: numeric ? values : values.map(String) }
        // NOT IN of a missing property is false, as ClickHouse's NULL semantics give.
        return e.op === 'in' ? inList : and({ op: 'not', arg: { op: 'is_null', arg: left.expr } }, { op: 'not', arg: inList })!
      }
      const fn = COMPARE[e.op]
      if (!fn) throw unsupported(attr, `"${e.op.toUpperCase()}"`)
      return compare(fn, e.left, e.right, attr)
    }
    case 'constant':
      if (typeof e.value === 'boolean') return lit(e.value)
      throw unsupported(attr, 'A constant condition')
    default:
      throw unsupported(attr, `A ${e.kind} expression`)
  }
}

/** A comparison, the constant side typed after the other: a time beside `timestamp`, a number beside a number. */
function compare(fn: BinaryFn, l: HogQLExpr, r: HogQLExpr, attr: string): Expr {
  const left = value(l, attr)
  const right = value(r, attr)
  // Two constants compare as text (never a failing cast in the store).
  if (left.kind === 'constant' && right.kind === 'constant') return bin(fn, lit(left.constant === null ? null : String(left.constant)), lit(right.constant === null ? null : String(right.constant)))
  const typed = (side: Value, other: Value): Expr => {
    if (side.kind !== 'constant') return side.kind === 'text' && other.kind === 'constant' && typeof other.constant === 'number' ? { op: 'to_number', arg: side.expr } : side.expr
    if (other.kind === 'time') {
      const at = typeof side.constant === 'string' ? Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(side.constant) ? side.constant : `${side.constant.replace(' ', 'T')}Z`) : Number.NaN
      if (Number.isNaN(at)) throw validationError(attr, `"${String(side.constant)}" is not a date or time to compare timestamp with.`, 'invalid_input')
      return { op: 'time', value: new Date(at) }
    }
    if (other.kind === 'text' && typeof side.constant !== 'number') return lit(side.constant === null ? null : String(side.constant))
    return side.expr
  }
  return bin(fn, typed(left, right), typed(right, left))
}

function value(e: HogQLExpr, attr: string): Value {
  if (e.kind === 'constant') return { expr: lit(e.value), kind: 'constant', constant: e.value }
  if (e.kind !== 'field') throw unsupported(attr, `A ${e.kind} expression as a value`)
  const chain = e.chain[0] === 'events' || e.chain[0] === 'e' ? e.chain.slice(1) : e.chain
  const [head, ...rest] = chain
  if (rest.length === 0) {
    switch (head) {
      case 'event':
      case 'distinct_id':
      case 'elements_chain':
        return { expr: col(head), kind: 'text' }
      case 'uuid':
        return { expr: { op: 'to_text', arg: col('uuid') }, kind: 'text' }
      case 'timestamp':
      case 'created_at':
        return { expr: col(head), kind: 'time' }
      case 'person_id':
        return { expr: { op: 'to_text', arg: { op: 'person_id' } }, kind: 'text' }
    }
  }
  if (head === 'properties' && rest.length === 1) return { expr: { op: 'property', source: 'event', key: rest[0]! }, kind: 'text' }
  if (head === 'person' && rest[0] === 'properties' && rest.length === 2) return { expr: { op: 'property', source: 'person', key: rest[1]! }, kind: 'text' }
  throw validationError(attr, `Unknown field "${e.chain.join('.')}": use event, distinct_id, uuid, timestamp, person_id, properties.<key> or person.properties.<key>.`, 'invalid_input')
}
