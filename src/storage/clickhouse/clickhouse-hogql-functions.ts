import { hogqlError } from '../../domain/hogql/hogql-error.ts'
import type { HogQLFunctionName } from '../../domain/hogql/hogql-functions.ts'
import { constantText as constantArg, type HogQLCallArgs as Args, type HogQLEmit as Emit } from '../event-sql/hogql/hogql-dialect.ts'
import type { ExprScope, Typed } from '../event-sql/hogql/hogql-sql-types.ts'

// ClickHouse's own functions, as PostHog's printer writes them (posthog/hogql/functions/mapping.py),
// limited to what runs on 18.16 and current releases: no `trimBoth`, `toStartOfWeek(ts, mode, tz)`,
// `JSONExtract*` or `ILIKE` on 18.16 (reference/clickhouse-nats.md), so those are spelt otherwise.

const numT = (sql: string): Typed => ({ sql, type: 'number' })
const textT = (sql: string): Typed => ({ sql, type: 'string' })
const boolT = (sql: string): Typed => ({ sql, type: 'bool' })
const n = (t: Typed, s: ExprScope) => s.dialect.toNumber(t)
const text = (t: Typed, s: ExprScope) => s.dialect.toText(t, s)
const firstType = (a: Typed[]) => a.find((t) => t.type !== 'null')?.type ?? 'null'
const constantText = (call: Args['call'], i: number): string => constantArg(call, i, hogqlError)
const utc = (sql: string) => `toTimeZone(${sql}, 'UTC')`
const list = (a: Typed[]) => a.map((t) => t.sql).join(', ')

/** An instant (a date read at local midnight) for the date-part functions. */
const instant = (t: Typed, s: ExprScope) => s.dialect.toDateTime(t, s)
/** A date in the project's zone. */
const localDate = (t: Typed, s: ExprScope) => s.dialect.toDate(t, s)

function part(fn: string): Emit {
  return ({ a, scope, tz }) => numT(`toInt64(${fn}(${instant(a[0]!, scope)}, ${tz()}))`)
}

/** A month, quarter or year start: a date of the project's calendar, as ClickHouse gives it. */
function startOfDate(fn: string): Emit {
  return ({ a, scope }) => ({ sql: `${fn}(${localDate(a[0]!, scope)})`, type: 'date' })
}

/** A key of a property bag: only `properties` and `person.properties` (18.16 has no JSONExtract*). */
function bagKeys(args: Args, fn: string): { bag: Typed; keys: string[] } {
  const bag = args.a[0]!
  if (!bag.bag) throw hogqlError(`${fn}() reads a property bag on ClickHouse (properties, person.properties): use ${fn}(properties, 'key').`)
  return { bag, keys: args.call.args.slice(1).map((_, i) => constantText(args.call, i + 1)) }
}

const DATE_DIFF_UNITS = new Set(['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'])

/** How each allow-listed HogQL function is written for ClickHouse. */
export const CLICKHOUSE_HOGQL_FUNCTIONS: Record<HogQLFunctionName, Emit> = {
  count: ({ a, call }) => numT(a.length === 0 ? 'count()' : call.distinct ? `count(DISTINCT ${a[0]!.sql})` : `count(${a[0]!.sql})`),
  countIf: ({ a }) => numT(`countIf(${a[0]!.sql})`),
  uniq: ({ a }) => numT(`uniq(${list(a)})`),
  uniqExact: ({ a }) => numT(`uniqExact(${list(a)})`),
  uniqIf: ({ a }) => numT(`uniqIf(${a[0]!.sql}, ${a[1]!.sql})`),
  // A sum of no rows (or of NULLs only) is 0.
  sum: ({ a, call, scope }) => numT(`coalesce(${call.distinct ? 'sumDistinct' : 'sum'}(${n(a[0]!, scope)}), 0)`),
  sumIf: ({ a, scope }) => numT(`coalesce(sumIf(${n(a[0]!, scope)}, ${a[1]!.sql}), 0)`),
  avg: ({ a, call, scope }) => numT(`${call.distinct ? 'avgDistinct' : 'avg'}(${n(a[0]!, scope)})`),
  avgIf: ({ a, scope }) => numT(`avgIf(${n(a[0]!, scope)}, ${a[1]!.sql})`),
  min: ({ a }) => ({ sql: `min(${a[0]!.sql})`, type: a[0]!.type }),
  max: ({ a }) => ({ sql: `max(${a[0]!.sql})`, type: a[0]!.type }),
  any: ({ a }) => ({ sql: `any(${a[0]!.sql})`, type: a[0]!.type }),
  argMax: ({ a }) => ({ sql: `argMax(${a[0]!.sql}, ${a[1]!.sql})`, type: a[0]!.type }),
  argMin: ({ a }) => ({ sql: `argMin(${a[0]!.sql}, ${a[1]!.sql})`, type: a[0]!.type }),
  median: ({ a, scope }) => numT(`median(${n(a[0]!, scope)})`),
  quantile: ({ a, call, scope }) => {
    const p = call.params?.[0]
    if (p?.kind !== 'constant' || typeof p.value !== 'number' || !(p.value >= 0 && p.value <= 1)) throw hogqlError('quantile(p)(x) takes a constant p between 0 and 1.')
    return numT(`quantile(${String(p.value)})(${n(a[0]!, scope)})`)
  },
  // Minutes are cut off the instant (zones differ by whole minutes); hours on the local clock, from
  // the instant, so the repeated 01:00 of a fall-back day stays two hours.
  toStartOfMinute: ({ a, scope }) => ({ sql: `toStartOfMinute(${instant(a[0]!, scope)})`, type: 'datetime' }),
  toStartOfHour: ({ a, scope, tz }) => {
    const ts = instant(a[0]!, scope)
    return { sql: `subtractSeconds(${ts}, toMinute(${ts}, ${tz()}) * 60 + toSecond(${ts}))`, type: 'datetime' }
  },
  toStartOfDay: ({ a, scope, tz }) => ({ sql: utc(`toStartOfDay(${instant(a[0]!, scope)}, ${tz()})`), type: 'datetime' }),
  // Sunday weeks (mode 0); 18.16 has no toStartOfWeek.
  toStartOfWeek: ({ a, scope }) => {
    const d = localDate(a[0]!, scope)
    return { sql: `(${d} - (toDayOfWeek(${d}) % 7))`, type: 'date' }
  },
  toStartOfMonth: startOfDate('toStartOfMonth'),
  toStartOfQuarter: startOfDate('toStartOfQuarter'),
  toStartOfYear: startOfDate('toStartOfYear'),
  toYear: part('toYear'),
  toMonth: part('toMonth'),
  toDayOfMonth: part('toDayOfMonth'),
  // Monday 1 ... Sunday 7.
  toDayOfWeek: part('toDayOfWeek'),
  toHour: part('toHour'),
  toDate: ({ a, scope }) => ({ sql: localDate(a[0]!, scope), type: 'date' }),
  toDateTime: ({ a, scope }) => ({ sql: instant(a[0]!, scope), type: 'datetime' }),
  dateDiff: ({ a, call, scope, tz }) => {
    const unit = constantText(call, 0).toLowerCase()
    if (!DATE_DIFF_UNITS.has(unit)) throw hogqlError(`dateDiff() unit must be one of ${[...DATE_DIFF_UNITS].join(', ')}.`)
    const [x, y] = [a[1]!, a[2]!]
    if (x.type === 'date' && y.type === 'date') return numT(`dateDiff(${`'${unit}'`}, ${x.sql}, ${y.sql})`)
    return numT(`dateDiff(${`'${unit}'`}, ${instant(x, scope)}, ${instant(y, scope)}, ${tz()})`)
  },
  now: ({ scope }) => ({ sql: `toDateTime(${Math.floor(scope.now.getTime() / 1000)}, 'UTC')`, type: 'datetime' }),
  today: ({ scope, tz }) => ({ sql: `toDate(toDateTime(${Math.floor(scope.now.getTime() / 1000)}, 'UTC'), ${tz()})`, type: 'date' }),
  lower: ({ a, scope }) => textT(`lower(${text(a[0]!, scope)})`),
  upper: ({ a, scope }) => textT(`upper(${text(a[0]!, scope)})`),
  // Spaces at both ends, as trimBoth (absent on 18.16).
  trim: ({ a, scope }) => textT(`replaceRegexpAll(${text(a[0]!, scope)}, '^ +| +$', '')`),
  concat: ({ a, scope }) => textT(`concat(${a.map((t) => text(t, scope)).join(', ')}${a.length === 1 ? ", ''" : ''})`),
  length: ({ a, scope }) => numT(`toInt64(length(${text(a[0]!, scope)}))`),
  substring: ({ a, scope }) => textT(`substring(${text(a[0]!, scope)}, ${a.slice(1).map((t) => `toInt64(${n(t, scope)})`).join(', ')})`),
  replaceAll: ({ a, scope }) => textT(`replaceAll(${a.map((t) => text(t, scope)).join(', ')})`),
  empty: ({ a, scope }) => boolT(`(length(${text(a[0]!, scope)}) = 0)`),
  notEmpty: ({ a, scope }) => boolT(`(length(${text(a[0]!, scope)}) > 0)`),
  isNull: ({ a }) => boolT(`isNull(${a[0]!.sql})`),
  isNotNull: ({ a }) => boolT(`isNotNull(${a[0]!.sql})`),
  coalesce: ({ a }) => ({ sql: `coalesce(${list(a)})`, type: firstType(a) }),
  ifNull: ({ a }) => ({ sql: `ifNull(${a[0]!.sql}, ${a[1]!.sql})`, type: firstType(a) }),
  if: ({ a }) => ({ sql: `if(${a[0]!.sql}, ${a[1]!.sql}, ${a[2]!.sql})`, type: firstType(a.slice(1)) }),
  multiIf: ({ a, call }) => {
    if (a.length % 2 === 0) throw hogqlError(`multiIf() takes pairs of condition and value, then a default (${call.args.length} arguments given).`)
    return { sql: `multiIf(${list(a)})`, type: firstType(a.filter((_, i) => i % 2 === 1 || i === a.length - 1)) }
  },
  toString: ({ a, scope }) => textT(text(a[0]!, scope)),
  toInt: ({ a, scope }) => numT(a[0]!.type === 'datetime' ? `toInt64(toUnixTimestamp(${a[0]!.sql}))` : `toInt64(trunc(${n(a[0]!, scope)}))`),
  toFloat: ({ a, scope }) => numT(a[0]!.type === 'datetime' ? `toFloat64(toUnixTimestamp(${a[0]!.sql}))` : `toFloat64(${n(a[0]!, scope)})`),
  round: ({ a, scope }) => numT(`round(${n(a[0]!, scope)}${a[1] ? `, ${n(a[1], scope)}` : ''})`),
  floor: ({ a, scope }) => numT(`floor(${n(a[0]!, scope)})`),
  abs: ({ a, scope }) => numT(`abs(${n(a[0]!, scope)})`),
  // A missing key gives '' (ClickHouse's JSONExtractString); a key's text as the property reads it.
  JSONExtractString: (args) => {
    const { bag, keys } = bagKeys(args, 'JSONExtractString')
    return textT(`coalesce(${bag.bag!(keys).sql}, '')`)
  },
  JSONExtractFloat: (args) => {
    const { bag, keys } = bagKeys(args, 'JSONExtractFloat')
    return numT(`toFloat64OrNull(toString(${bag.bag!(keys).sql}))`)
  },
  JSONHas: (args) => {
    const { bag, keys } = bagKeys(args, 'JSONHas')
    return boolT(bag.bagHas!(keys))
  },
}
