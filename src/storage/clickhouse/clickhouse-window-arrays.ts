import type { AggregateFn, WindowFrame } from '../../domain/query/query-plan.ts'
import type { WindowCall, WindowRelationInput } from '../event-sql/event-dialect.ts'

/**
 * Window functions as array programs, for ClickHouse 18.16 (no `OVER`; the SQL also runs on current
 * releases). Per partition, the rows are gathered into one array of tuples (`groupArray`), sorted
 * by the window's order (`arraySort`), each window's result is computed as an array of the same
 * length, and `ARRAY JOIN` turns them back into rows:
 *
 *   SELECT tupleElement(__r, 1) AS `col`, ..., __w0 FROM (
 *     SELECT arraySort(..., groupArray(tuple(cols..., order keys..., args...))) AS __rows, <arrays>
 *     FROM <source> AS t WHERE <where> GROUP BY <partition>
 *   ) ARRAY JOIN __rows AS __r, __wa0 AS __w0
 *
 * Frames are bounds per row (`__lo`, `__hi`, 1-based, inclusive) and the aggregate runs over the
 * slice with `arrayReduce`; RANGE frames compare the order key (peers by dense rank). SQL's rules
 * are kept: an aggregate over an empty frame is NULL (count: 0), NULL arguments are skipped, `lag`
 * and `lead` give NULL past the partition's ends. Each array is an alias of the same SELECT: 18.16
 * prunes a subquery's column read only inside a lambda (`reference/clickhouse-nats.md`).
 *
 * Windows with different partitions or orders are computed in successive passes, each over the
 * previous one's relation. Cost: O(rows) per partition for lag/lead/rank and whole-partition
 * aggregates, O(rows x frame) for framed aggregates.
 */
export function clickHouseWindowRelation(input: WindowRelationInput): string {
  const groups = new Map<string, Array<{ name: string; call: WindowCall }>>()
  for (const w of input.windows) {
    const key = JSON.stringify([w.call.partitionBy, w.call.orderBy])
    groups.set(key, [...(groups.get(key) ?? []), w])
  }
  let sql = ''
  let columns = [...input.columns]
  for (const windows of groups.values()) {
    sql = sql ? pass(`(${sql}) AS t`, undefined, columns, windows) : pass(input.from, input.where, columns, windows)
    columns = [...columns, ...windows.map((w) => w.name)]
  }
  return sql
}

/** One pass: the windows sharing a partition and an order. */
function pass(from: string, where: string | undefined, columns: readonly string[], windows: ReadonlyArray<{ name: string; call: WindowCall }>): string {
  const { partitionBy, orderBy } = windows[0]!.call
  const n = columns.length
  const keys = orderBy.map((o) => (o.desc ? `negate(${o.sql})` : o.sql))
  const items = [...columns, ...keys]
  const argAt = new Map<string, number>()
  const argIndex = (sql: string): number => {
    const at = argAt.get(sql)
    if (at !== undefined) return at
    items.push(sql)
    argAt.set(sql, items.length)
    return items.length
  }
  const field = (i: number) => `arrayMap(__x -> tupleElement(__x, ${i}), __rows)`
  const sortKey = keys.length === 1 ? `tupleElement(__x, ${n + 1})` : `tuple(${keys.map((_, i) => `tupleElement(__x, ${n + 1 + i})`).join(', ')})`
  const arrays: string[] = []
  const outputs: string[] = []
  windows.forEach((w, j) => {
    const a = w.call.arg !== undefined ? `__a${j}` : undefined
    if (a) arrays.push(`${field(argIndex(w.call.arg!))} AS ${a}`)
    const result = windowArray(w.call, a, keys.length)
    if (result.scalar) {
      arrays.push(`${result.sql} AS __ws${j}`)
      outputs.push(`__ws${j} AS ${w.name}`)
    } else {
      arrays.push(`${result.sql} AS __wa${j}`)
      outputs.push(w.name)
    }
  })
  const gathered = `groupArray(tuple(${items.map((_, i) => `__i${i}`).join(', ')}))`
  const joins = windows.map((w, j) => (outputs[j] === w.name ? `, __wa${j} AS ${w.name}` : '')).join('')
  // The items are named in an inner SELECT (`__i<n>`) so that the tuple reads plain columns.
  const named = `SELECT ${items.map((sql, i) => `${sql} AS __i${i}`).join(', ')} FROM ${from}${where ? ` WHERE ${where}` : ''}`
  const partition = partitionBy.map((_, i) => `__p${i}`)
  const namedWithPartition = partition.length ? named.replace(/^SELECT /, `SELECT ${partitionBy.map((p, i) => `${p} AS __p${i}`).join(', ')}, `) : named
  const grouped = [
    `${keys.length ? `arraySort(__x -> ${sortKey}, ${gathered})` : gathered} AS __rows`,
    'arrayEnumerate(__rows) AS __n',
    'length(__rows) AS __len',
    ...(keys.length ? [`arrayEnumerateDense(arrayMap(__x -> ${sortKey}, __rows)) AS __dense`] : []),
    ...(keys.length === 1 ? [`${field(n + 1)} AS __key`] : []),
    ...arrays,
  ]
  const inner = `SELECT ${grouped.join(', ')} FROM (${namedWithPartition})${partition.length ? ` GROUP BY ${partition.join(', ')}` : ''}`
  const cols = columns.map((c, i) => `tupleElement(__r, ${i + 1}) AS ${c}`)
  return `SELECT ${[...cols, ...outputs].join(', ')} FROM (${inner}) ARRAY JOIN __rows AS __r${joins}`
}

const nullable = (a: string) => `arrayMap(__x -> toNullable(__x), ${a})`

/** One window's result: an array beside `__rows`, or one value for the whole partition. */
function windowArray(call: WindowCall, a: string | undefined, orderKeys: number): { sql: string; scalar?: boolean } {
  switch (call.fn) {
    case 'row_number':
      return { sql: '__n' }
    case 'dense_rank':
      return orderKeys ? { sql: '__dense' } : { sql: 'arrayMap(__x -> toUInt64(1), __rows)' }
    case 'lag':
      return { sql: `arrayPushFront(arrayPopBack(${nullable(need(a, call))}), NULL)` }
    case 'lead':
      return { sql: `arrayPushBack(arrayPopFront(${nullable(need(a, call))}), NULL)` }
    default:
      return aggregate(call.fn, call, a, orderKeys)
  }
}

function need(a: string | undefined, call: WindowCall): string {
  if (!a) throw new Error(`window ${call.fn} needs an argument`)
  return a
}

const REDUCERS: Partial<Record<AggregateFn, string>> = { count: 'count', uniq: 'uniqExact', sum: 'sum', avg: 'avg', min: 'min', max: 'max', any: 'any', bit_or: 'groupBitOr' }

/** An aggregate over the frame: the whole partition (no order, no frame) or per-row bounds. */
function aggregate(fn: AggregateFn, call: WindowCall, a: string | undefined, orderKeys: number): { sql: string; scalar?: boolean } {
  const reducer = REDUCERS[fn]
  if (!reducer || call.by !== undefined) throw new Error(`window ${fn} is not written as an array program`)
  const over = (slice: string) => (a === undefined ? (fn === 'count' ? `length(${slice})` : failNoArg(fn)) : fn === 'count' ? `arrayReduce('count', ${slice})` : `if(empty(${slice}), NULL, arrayReduce('${reducer}', ${slice}))`)
  const values = a ?? '__n'
  // SQL's default frame: the whole partition without an order, else up to the row's last peer.
  const frame: WindowFrame = call.frame ?? (orderKeys ? { unit: 'range', start: 'unbounded', end: 0 } : { unit: 'rows', start: 'unbounded', end: 'unbounded' })
  if (frame.start === 'unbounded' && frame.end === 'unbounded' && !frame.excludeCurrent) return { sql: over(values), scalar: true }
  const { lo, hi } = bounds(frame, orderKeys)
  const slice = frame.excludeCurrent
    ? `arrayConcat(arraySlice(${values}, __lo, greatest(0, least(__hi, __y - 1) - __lo + 1)), arraySlice(${values}, greatest(__lo, __y + 1), greatest(0, __hi - greatest(__lo, __y + 1) + 1)))`
    : `arraySlice(${values}, __lo, greatest(0, __hi - __lo + 1))`
  return { sql: `arrayMap((__lo, __hi, __y) -> ${over(slice)}, ${lo}, ${hi}, __n)` }
}

function failNoArg(fn: string): never {
  throw new Error(`window ${fn} needs an argument`)
}

/** Per-row frame bounds (1-based, inclusive; lo > hi when empty) as arrays over `__n`. */
function bounds(frame: WindowFrame, orderKeys: number): { lo: string; hi: string } {
  const num = (v: number) => {
    if (!Number.isSafeInteger(v)) throw new Error(`window frame offset ${v} is not a whole number`)
    return v < 0 ? `(${v})` : String(v)
  }
  if (frame.unit === 'rows') {
    return {
      lo: frame.start === 'unbounded' ? 'arrayMap(__y -> 1, __n)' : `arrayMap(__y -> greatest(1, toInt64(__y) + ${num(frame.start)}), __n)`,
      hi: frame.end === 'unbounded' ? 'arrayMap(__y -> __len, __n)' : `arrayMap(__y -> least(toInt64(__len), toInt64(__y) + ${num(frame.end)}), __n)`,
    }
  }
  if (orderKeys === 0) throw new Error('a RANGE frame needs an order')
  // Offsets compare the single order key; 0 and unbounded ends only need peers (the dense rank).
  const offsets = (frame.start !== 'unbounded' && frame.start !== 0) || (frame.end !== 'unbounded' && frame.end !== 0)
  if (offsets && orderKeys !== 1) throw new Error('a RANGE frame with offsets needs exactly one order key')
  const k = offsets ? '__key' : '__dense'
  return {
    lo: frame.start === 'unbounded' ? 'arrayMap(__y -> 1, __n)' : `arrayMap(__y -> arrayCount(__z -> __z < __y + ${num(frame.start)}, ${k}) + 1, ${k})`,
    hi: frame.end === 'unbounded' ? 'arrayMap(__y -> __len, __n)' : `arrayMap(__y -> arrayCount(__z -> __z <= __y + ${num(frame.end)}, ${k}), ${k})`,
  }
}
