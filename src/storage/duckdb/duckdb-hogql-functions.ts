import { hogqlError } from '../../domain/hogql/hogql-error.ts'
import type { HogQLFunctionName } from '../../domain/hogql/hogql-functions.ts'
import { constantText as constantArg, type HogQLCallArgs as Args, type HogQLEmit as Emit } from '../event-sql/hogql/hogql-dialect.ts'
import type { ExprScope, Typed } from '../event-sql/hogql/hogql-sql-types.ts'

type Call = Args['call']
const asNumber = (t: Typed): string => t.type === 'number' || t.type === 'null' ? t.sql : t.type === 'bool' ? `CAST(${t.sql} AS INTEGER)` : `TRY_CAST(${t.sql} AS DOUBLE)`
const asText = (t: Typed, s: ExprScope): string => s.dialect.toText(t, s)
const asDate = (t: Typed, s: ExprScope): string => s.dialect.toDate(t, s)
const asDateTime = (t: Typed, s: ExprScope): string => s.dialect.toDateTime(t, s)

const num = (sql: string): Typed => ({ sql, type: 'number' })
const text = (sql: string): Typed => ({ sql, type: 'string' })
const bool = (sql: string): Typed => ({ sql, type: 'bool' })
const time = (t: Typed, s: ExprScope) => asDateTime(t, s)
const firstType = (a: Typed[]) => a.find((t) => t.type !== 'null')?.type ?? 'null'
const agg = (fn: string, distinct: boolean, arg: string) => `${fn}(${distinct ? 'DISTINCT ' : ''}${arg})`
const filtered = (sql: string, cond: Typed) => `${sql} FILTER (WHERE ${cond.sql})`

/** `toStartOf...` on the project's wall clock: days and shorter give a time, weeks (Sunday start) and longer a date, as ClickHouse. */
function startOf(unit: 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year'): Emit {
  return ({ a, scope, tz }) => {
    const ts = time(a[0]!, scope)
    const local = `timezone(${tz()}, ${ts})`
    // Minutes and hours are cut off the instant itself: the repeated 01:00 of a fall-back day stays two hours.
    if (unit === 'minute' || unit === 'hour') return { sql: `(${ts} - (${local} - date_trunc('${unit}', ${local})))`, type: 'datetime' }
    if (unit === 'day') return { sql: `timezone(${tz()}, date_trunc('day', ${local}))`, type: 'datetime' }
    if (unit === 'week') return { sql: `CAST(date_trunc('week', ${local} + INTERVAL 1 DAY) - INTERVAL 1 DAY AS DATE)`, type: 'date' }
    return { sql: `CAST(date_trunc('${unit}', ${local}) AS DATE)`, type: 'date' }
  }
}

function part(fn: string): Emit {
  return ({ a, scope, tz }) => {
    const t = a[0]!
    const local = t.type === 'date' ? t.sql : `timezone(${tz()}, ${time(t, scope)})`
    return num(`CAST(${fn}(${local}) AS BIGINT)`)
  }
}

const constantText = (call: Call, i: number): string => constantArg(call, i, hogqlError)

function jsonPath({ call, scope }: Args): string {
  const keys = call.args.slice(1).map((_, i) => constantText(call, i + 1))
  return scope.params.add(`/${keys.map((k) => k.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`)
}

const DATE_DIFF_UNITS = new Set(['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'])

/** How each allow-listed HogQL function is written in DuckDB (ClickHouse's semantics where they differ). */
export const DUCKDB_HOGQL_FUNCTIONS: Record<HogQLFunctionName, Emit> = {
  count: ({ a, call }) => num(a.length === 0 ? 'count(*)' : agg('count', call.distinct, a[0]!.sql)),
  countIf: ({ a }) => num(filtered('count(*)', a[0]!)),
  uniq: ({ a }) => num(`count(DISTINCT ${a.length === 1 ? a[0]!.sql : `row(${a.map((t) => t.sql).join(', ')})`})`),
  uniqExact: ({ a }) => num(`count(DISTINCT ${a.length === 1 ? a[0]!.sql : `row(${a.map((t) => t.sql).join(', ')})`})`),
  uniqIf: ({ a }) => num(filtered(`count(DISTINCT ${a[0]!.sql})`, a[1]!)),
  // ClickHouse's sum of no rows is 0, not NULL.
  sum: ({ a, call }) => num(`COALESCE(${agg('sum', call.distinct, asNumber(a[0]!))}, 0)`),
  sumIf: ({ a }) => num(`COALESCE(${filtered(`sum(${asNumber(a[0]!)})`, a[1]!)}, 0)`),
  avg: ({ a, call }) => num(agg('avg', call.distinct, asNumber(a[0]!))),
  avgIf: ({ a }) => num(filtered(`avg(${asNumber(a[0]!)})`, a[1]!)),
  min: ({ a }) => ({ sql: `min(${a[0]!.sql})`, type: a[0]!.type }),
  max: ({ a }) => ({ sql: `max(${a[0]!.sql})`, type: a[0]!.type }),
  any: ({ a }) => ({ sql: `any_value(${a[0]!.sql})`, type: a[0]!.type }),
  argMax: ({ a }) => ({ sql: `arg_max(${a[0]!.sql}, ${a[1]!.sql})`, type: a[0]!.type }),
  argMin: ({ a }) => ({ sql: `arg_min(${a[0]!.sql}, ${a[1]!.sql})`, type: a[0]!.type }),
  median: ({ a }) => num(`quantile_cont(${asNumber(a[0]!)}, 0.5)`),
  quantile: ({ a, call }) => {
    const p = call.params?.[0]
    if (p?.kind !== 'constant' || typeof p.value !== 'number' || !(p.value >= 0 && p.value <= 1)) throw hogqlError('quantile(p)(x) takes a constant p between 0 and 1.')
    return num(`quantile_cont(${asNumber(a[0]!)}, ${String(p.value)})`)
  },
  toStartOfMinute: startOf('minute'),
  toStartOfHour: startOf('hour'),
  toStartOfDay: startOf('day'),
  toStartOfWeek: startOf('week'),
  toStartOfMonth: startOf('month'),
  toStartOfQuarter: startOf('quarter'),
  toStartOfYear: startOf('year'),
  toYear: part('year'),
  toMonth: part('month'),
  toDayOfMonth: part('day'),
  // ClickHouse's default mode: Monday 1 ... Sunday 7.
  toDayOfWeek: part('isodow'),
  toHour: part('hour'),
  toDate: ({ a, scope }) => ({ sql: asDate(a[0]!, scope), type: 'date' }),
  toDateTime: ({ a, scope }) => ({ sql: asDateTime(a[0]!, scope), type: 'datetime' }),
  dateDiff: ({ a, call, scope, tz }) => {
    const unit = constantText(call, 0).toLowerCase()
    if (!DATE_DIFF_UNITS.has(unit)) throw hogqlError(`dateDiff() unit must be one of ${[...DATE_DIFF_UNITS].join(', ')}.`)
    const local = (t: Typed) => (t.type === 'date' ? t.sql : `timezone(${tz()}, ${time(t, scope)})`)
    return num(`date_diff('${unit}', ${local(a[1]!)}, ${local(a[2]!)})`)
  },
  now: ({ scope }) => ({ sql: `${scope.params.add(scope.now.toISOString())}::TIMESTAMPTZ`, type: 'datetime' }),
  today: ({ scope, tz }) => ({ sql: `CAST(timezone(${tz()}, ${scope.params.add(scope.now.toISOString())}::TIMESTAMPTZ) AS DATE)`, type: 'date' }),
  lower: ({ a, scope }) => text(`lower(${asText(a[0]!, scope)})`),
  upper: ({ a, scope }) => text(`upper(${asText(a[0]!, scope)})`),
  trim: ({ a, scope }) => text(`trim(${asText(a[0]!, scope)})`),
  // `||` keeps ClickHouse's NULL in, NULL out (DuckDB's concat() skips NULLs).
  concat: ({ a, scope }) => text(`(${a.map((t) => asText(t, scope)).join(' || ')})`),
  length: ({ a, scope }) => num(`length(${asText(a[0]!, scope)})`),
  substring: ({ a, scope }) => text(`substring(${asText(a[0]!, scope)}, ${a.slice(1).map((t) => `CAST(${asNumber(t)} AS BIGINT)`).join(', ')})`),
  replaceAll: ({ a, scope }) => text(`replace(${a.map((t) => asText(t, scope)).join(', ')})`),
  empty: ({ a, scope }) => bool(`(length(${asText(a[0]!, scope)}) = 0)`),
  notEmpty: ({ a, scope }) => bool(`(length(${asText(a[0]!, scope)}) > 0)`),
  isNull: ({ a }) => bool(`(${a[0]!.sql} IS NULL)`),
  isNotNull: ({ a }) => bool(`(${a[0]!.sql} IS NOT NULL)`),
  coalesce: ({ a }) => ({ sql: `COALESCE(${a.map((t) => t.sql).join(', ')})`, type: firstType(a) }),
  ifNull: ({ a }) => ({ sql: `COALESCE(${a[0]!.sql}, ${a[1]!.sql})`, type: firstType(a) }),
  if: ({ a }) => ({ sql: `(CASE WHEN ${a[0]!.sql} THEN ${a[1]!.sql} ELSE ${a[2]!.sql} END)`, type: firstType(a.slice(1)) }),
  multiIf: ({ a, call }) => {
    if (a.length % 2 === 0) throw hogqlError(`multiIf() takes pairs of condition and value, then a default (${call.args.length} arguments given).`)
    const pairs: string[] = []
    for (let i = 0; i + 1 < a.length; i += 2) pairs.push(`WHEN ${a[i]!.sql} THEN ${a[i + 1]!.sql}`)
    return { sql: `(CASE ${pairs.join(' ')} ELSE ${a[a.length - 1]!.sql} END)`, type: firstType(a.filter((_, i) => i % 2 === 1 || i === a.length - 1)) }
  },
  toString: ({ a, scope }) => text(asText(a[0]!, scope)),
  toInt: ({ a }) => num(a[0]!.type === 'datetime' ? `CAST(epoch(${a[0]!.sql}) AS BIGINT)` : `CAST(trunc(${asNumber(a[0]!)}) AS BIGINT)`),
  toFloat: ({ a }) => num(a[0]!.type === 'datetime' ? `epoch(${a[0]!.sql})` : asNumber(a[0]!)),
  round: ({ a }) => num(`round(${asNumber(a[0]!)}${a[1] ? `, CAST(${asNumber(a[1])} AS INTEGER)` : ''})`),
  floor: ({ a }) => num(`floor(${asNumber(a[0]!)})`),
  abs: ({ a }) => num(`abs(${asNumber(a[0]!)})`),
  // ClickHouse's JSONExtractString gives '' for a missing key.
  JSONExtractString: (args) => text(`COALESCE(json_extract_string(${asText(args.a[0]!, args.scope)}, ${jsonPath(args)}), '')`),
  JSONExtractFloat: (args) => num(`TRY_CAST(json_extract_string(${asText(args.a[0]!, args.scope)}, ${jsonPath(args)}) AS DOUBLE)`),
  JSONHas: (args) => bool(`COALESCE(json_exists(${asText(args.a[0]!, args.scope)}, ${jsonPath(args)}), FALSE)`),
}
