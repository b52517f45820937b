import { bucketKey, offsetSegments } from './bucket-keys.ts'
import { shiftInstant, type Interval, type ResolvedRange } from './date-range.ts'
import { and, col, fromEvents, fromPlan, lit, timeBetween, type Expr, type Plan } from './query-plan.ts'
import { BREAKDOWN_PART_SEPARATOR, type Breakdown, type BreakdownPart, type MathType, type Series } from './trends-query.ts'

export const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$'
export const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$'

const QUANTILE: Partial<Record<MathType, number>> = { median: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99 }

/** How many intervals a rolling active-users window spans (weekly/monthly active). */
export function activeWindow(math: MathType, interval: Interval): number {
  const days = math === 'weekly_active' ? 7 : 30
  if (interval === 'hour') return days * 24
  if (interval === 'day') return days
  return 1
}

/** The series' aggregate over matching events (`math`). */
export function mathExpr(series: Series): Expr {
  const number = (): Expr => ({ op: 'to_number', arg: { op: 'property', source: 'event', key: series.mathProperty! } })
  switch (series.math) {
    case 'total':
      return { op: 'aggregate', fn: 'count' }
    case 'dau':
    case 'weekly_active':
    case 'monthly_active':
      return { op: 'aggregate', fn: 'uniq', arg: { op: 'person_id' } }
    case 'unique_group':
      return { op: 'aggregate', fn: 'uniq', arg: col(`group_${series.mathGroupTypeIndex}`) }
    case 'sum':
    case 'avg':
    case 'min':
    case 'max':
      return { op: 'aggregate', fn: series.math, arg: number() }
    default:
      return { op: 'aggregate', fn: 'quantile', arg: number(), quantile: QUANTILE[series.math] }
  }
}

/** Rows the math reads at all: a group math skips events without that group. */
function mathWhere(series: Series): Expr | undefined {
  if (series.math !== 'unique_group') return undefined
  const group = col(`group_${series.mathGroupTypeIndex}`)
  return { op: 'and', args: [{ op: 'not', arg: { op: 'is_null', arg: group } }, { op: 'binary', fn: '!=', left: group, right: { op: 'literal', value: '' } }] }
}

/** The breakdown value of an event as text; absent or empty is PostHog's null marker. */
export function breakdownExpr(b: Breakdown): Expr {
  const parts = b.parts.map(partExpr)
  return parts.length === 1 ? parts[0]! : { op: 'concat', args: parts, separator: BREAKDOWN_PART_SEPARATOR }
}

/** What `breakdownExpr` gives an event without any of the breakdown's values. */
export function breakdownNone(b: Breakdown): string {
  return b.parts.map(() => BREAKDOWN_NULL).join(BREAKDOWN_PART_SEPARATOR)
}

/** One part's value as text; absent or empty is PostHog's null marker. */
function partExpr(p: BreakdownPart): Expr {
  const value: Expr = p.type === 'group' ? groupValueExpr(p) : { op: 'property', source: p.type, key: p.key }
  const missing: Expr = { op: 'or', args: [{ op: 'is_null', arg: value }, { op: 'binary', fn: '=', left: value, right: { op: 'literal', value: '' } }] }
  return { op: 'case', when: [[missing, { op: 'literal', value: BREAKDOWN_NULL }]], else: value }
}

/**
 * A group property of the event's group (`$group_<index>`): the groups' values looked up by key,
 * one `IN` list per distinct value (breakdown values are few, group keys may be many).
 */
function groupValueExpr(b: BreakdownPart): Expr {
  if (!b.groupValues) throw new Error('group breakdown values were not loaded')
  const byValue = new Map<string, string[]>()
  for (const [key, value] of b.groupValues) byValue.set(value, [...(byValue.get(value) ?? []), key])
  const group: Expr = { op: 'column', name: `group_${b.groupTypeIndex}` }
  if (byValue.size === 0) return { op: 'literal', value: null }
  return { op: 'case', when: [...byValue].map(([value, keys]) => [{ op: 'in', arg: group, values: keys }, { op: 'literal', value }] as [Expr, Expr]), else: { op: 'literal', value: null } }
}

export interface SeriesPlanInput {
  series: Series
  /** Which events the series counts: event/action and every property filter. */
  match: Expr | undefined
  range: ResolvedRange
  /** Break down by this value expression (already mapped to "other" where needed). */
  breakdown: Expr | null
  /** One value over the whole range (aggregated displays) instead of one per interval. */
  aggregated: boolean
}

/** The bucket key of each event's timestamp, with the zone's offsets over `[from, range.to)`. */
export function timestampBucket(range: ResolvedRange, from: Date = range.from): Expr {
  return { op: 'bucket', interval: range.interval, offsets: offsetSegments(from, range.to, range.timeZone), arg: col('timestamp') }
}

/** Whether a series counts persons over a rolling window (rows then hold running totals, see `seriesPlan`). */
export function isRolling(series: Series, interval: Interval): boolean {
  return (series.math === 'weekly_active' || series.math === 'monthly_active') && activeWindow(series.math, interval) > 1
}

/**
 * Rows `{bucket (key), breakdown_value, value}` of one series: events of the range grouped by the
 * interval (in the project's zone) and breakdown value, the math computed in the store. Rolling
 * (weekly/monthly active) series answer one row per key where the count changes, holding the
 * count from that key on: the caller carries it forward to the buckets in between.
 */
export function seriesPlan(input: SeriesPlanInput): Plan {
  const { series, range, breakdown } = input
  const bd: Expr = breakdown ?? { op: 'literal', value: '' }
  if (isRolling(series, range.interval) && !input.aggregated) return activeUsersPlan(input, activeWindow(series.math, range.interval), bd)
  const bucket = timestampBucket(range)
  const keys = input.aggregated ? [{ alias: 'bucket', expr: { op: 'literal', value: 0 } as Expr }] : [{ alias: 'bucket', expr: bucket }]
  return {
    source: fromEvents(),
    select: [...keys, { alias: 'breakdown_value', expr: bd }, { alias: 'value', expr: mathExpr(series) }],
    where: and(timeBetween(range.from, range.to), input.match, mathWhere(series)),
    groupBy: input.aggregated ? [bd] : [bucket, bd],
  }
}

/**
 * Persons active in the `window` intervals up to each bucket, without repeating each person-interval
 * `window` times: a person active at key b after an earlier active key p covers the keys from
 * max(b, p + window) to b + window - 1, spans that never overlap. Each span adds 1 at its start and
 * removes it after its end; a running sum of those changes is the count.
 */
function activeUsersPlan(input: SeriesPlanInput, window: number, bd: Expr): Plan {
  const { range } = input
  const interval = range.interval
  const shift = (arg: Expr, n: number | Expr): Expr => ({ op: 'shift', interval, n, arg })
  const start = shiftInstant(range.from, interval, -(window - 1), range.timeZone)
  const bucket = timestampBucket(range, start)
  const active: Plan = {
    source: fromEvents(),
    select: [{ alias: 'person', expr: { op: 'person_id' } }, { alias: 'active', expr: bucket }, { alias: 'breakdown_value', expr: bd }],
    where: and(timeBetween(start, range.to), input.match),
    groupBy: [{ op: 'person_id' }, bucket, bd],
  }
  const withPrevious: Plan = {
    source: fromPlan(active),
    select: [
      { alias: 'active', expr: col('active') }, { alias: 'breakdown_value', expr: col('breakdown_value') },
      { alias: 'previous', expr: { op: 'window', fn: 'lag', arg: col('active'), partitionBy: [col('person'), col('breakdown_value')], orderBy: [{ expr: col('active') }] } },
    ],
  }
  const fresh: Expr = { op: 'or', args: [{ op: 'is_null', arg: col('previous') }, { op: 'binary', fn: '<', left: shift(col('previous'), window), right: col('active') }] }
  const spans: Plan = {
    source: fromPlan(withPrevious),
    select: [
      { alias: 'span_start', expr: { op: 'case', when: [[fresh, col('active')]], else: shift(col('previous'), window) } },
      { alias: 'span_end', expr: shift(col('active'), window) },
      { alias: 'breakdown_value', expr: col('breakdown_value') },
    ],
  }
  const isStart: Expr = { op: 'binary', fn: '=', left: col('k'), right: lit(0) }
  const changes: Plan = {
    source: { kind: 'spread', plan: spans, times: 2 },
    select: [
      { alias: 'at', expr: { op: 'case', when: [[isStart, col('span_start')]], else: col('span_end') } },
      { alias: 'breakdown_value', expr: col('breakdown_value') },
      { alias: 'delta', expr: { op: 'aggregate', fn: 'sum', arg: { op: 'case', when: [[isStart, lit(1)]], else: lit(-1) } } },
    ],
    groupBy: [{ op: 'case', when: [[isStart, col('span_start')]], else: col('span_end') }, col('breakdown_value')],
  }
  const running: Plan = {
    source: fromPlan(changes),
    select: [
      { alias: 'bucket', expr: col('at') }, { alias: 'breakdown_value', expr: col('breakdown_value') },
      { alias: 'value', expr: { op: 'window', fn: 'sum', arg: col('delta'), partitionBy: [col('breakdown_value')], orderBy: [{ expr: col('at') }] } },
    ],
  }
  const last = bucketKey(range.buckets[range.buckets.length - 1]!, interval, range.timeZone)
  return {
    source: fromPlan(running),
    select: [{ alias: 'bucket', expr: col('bucket') }, { alias: 'breakdown_value', expr: col('breakdown_value') }, { alias: 'value', expr: col('value') }],
    where: { op: 'binary', fn: '<=', left: col('bucket'), right: lit(last) },
  }
}

const STEP_MS = { hour: 3_600_000, day: 86_400_000, week: 604_800_000 } as const

/**
 * Unique persons per bucket (dau, or weekly/monthly active over their window) from one 64-bit word
 * per person: bit i set when the person was active in interval i of the span read. Grouping by
 * person alone (not person and interval) halves the work of exact counting; each bucket's count is
 * then a sum over persons of "any bit of its window set". Applies when the span fits in 64
 * intervals (hour/day/week); otherwise `null` and `seriesPlan` answers. Rows: one per breakdown
 * value, with `c0`..`cN` the counts of the range's buckets (`keys`).
 */
export function personBitsPlan(input: SeriesPlanInput): { plan: Plan; keys: number[] } | null {
  const { series, range } = input
  const rolling = series.math === 'weekly_active' || series.math === 'monthly_active'
  if (input.aggregated || range.interval === 'month' || !(series.math === 'dau' || rolling)) return null
  const window = rolling ? activeWindow(series.math, range.interval) : 1
  const keys = range.buckets.map((b) => bucketKey(b, range.interval, range.timeZone))
  if (keys.length + window - 1 > 64) return null
  const step = STEP_MS[range.interval]
  const start = window > 1 ? shiftInstant(range.from, range.interval, -(window - 1), range.timeZone) : range.from
  const first = keys[0]! - (window - 1) * step
  const bd: Expr = input.breakdown ?? lit('')
  const index: Expr = { op: 'binary', fn: '/', left: { op: 'binary', fn: '-', left: timestampBucket(range, start), right: lit(first) }, right: lit(step) }
  const perPerson: Plan = {
    source: fromEvents(),
    select: [{ alias: 'breakdown_value', expr: bd }, { alias: 'person', expr: { op: 'person_id' } }, { alias: 'active', expr: { op: 'aggregate', fn: 'bit_or', arg: { op: 'bit_flag', index } } }],
    where: and(timeBetween(start, range.to), input.match, { op: 'not', arg: { op: 'is_null', arg: { op: 'person_id' } } }),
    groupBy: [bd, { op: 'person_id' }],
  }
  const windowMask = (i: number) => (((1n << BigInt(window)) - 1n) << BigInt(i)).toString()
  return {
    plan: {
      source: fromPlan(perPerson),
      select: [
        { alias: 'breakdown_value', expr: col('breakdown_value') },
        ...keys.map((_, i) => ({ alias: `c${i}`, expr: { op: 'aggregate', fn: 'sum', arg: { op: 'case', when: [[{ op: 'bits_any', arg: col('active'), mask: windowMask(i) }, lit(1)]], else: lit(0) } } as Expr })),
      ],
      groupBy: [col('breakdown_value')],
    },
    keys,
  }
}

const MERGE: Partial<Record<MathType, 'sum' | 'min' | 'max'>> = { total: 'sum', sum: 'sum', min: 'min', max: 'max' }

/**
 * For maths whose per-value results merge (counts and sums add, minima and maxima combine), the
 * breakdown in one statement: values ranked by their total over the range (PostHog's order), those
 * past `limit` merged into "other". Rows `{bucket, breakdown_value, value, rank}` (other: limit + 1).
 * `null` for the other maths (unique persons, averages, quantiles), which need the two statements.
 */
export function rankedBreakdownPlan(input: Omit<SeriesPlanInput, 'breakdown'>, b: Breakdown): Plan | null {
  const merge = MERGE[input.series.math]
  if (!merge) return null
  const grouped = seriesPlan({ ...input, breakdown: breakdownExpr(b) })
  const withTotal: Plan = {
    source: fromPlan(grouped),
    select: [
      { alias: 'bucket', expr: col('bucket') }, { alias: 'breakdown_value', expr: col('breakdown_value') }, { alias: 'value', expr: col('value') },
      { alias: 'total', expr: { op: 'window', fn: 'sum', arg: col('value'), partitionBy: [col('breakdown_value')], orderBy: [] } },
    ],
  }
  const ranked: Plan = {
    source: fromPlan(withTotal),
    select: [
      { alias: 'bucket', expr: col('bucket') }, { alias: 'breakdown_value', expr: col('breakdown_value') }, { alias: 'value', expr: col('value') },
      { alias: 'rank', expr: { op: 'window', fn: 'dense_rank', partitionBy: [], orderBy: [{ expr: col('total'), desc: true }, { expr: col('breakdown_value') }] } },
    ],
  }
  const kept: Expr = { op: 'binary', fn: '<=', left: col('rank'), right: lit(b.limit) }
  const folded: Expr = { op: 'case', when: [[kept, col('breakdown_value')]], else: lit(BREAKDOWN_OTHER) }
  return {
    source: fromPlan(ranked),
    select: [
      { alias: 'bucket', expr: col('bucket') }, { alias: 'breakdown_value', expr: folded },
      { alias: 'value', expr: { op: 'aggregate', fn: merge, arg: col('value') } },
      { alias: 'rank', expr: { op: 'case', when: [[kept, col('rank')]], else: lit(b.limit + 1) } },
    ],
    groupBy: [col('bucket'), folded, { op: 'case', when: [[kept, col('rank')]], else: lit(b.limit + 1) }],
  }
}

/** The wide rows of `personBitsPlan` as `{bucket, breakdown_value, value}` rows. */
export function unpivotBits(rows: readonly Record<string, unknown>[], keys: readonly number[]): Array<{ bucket: number; breakdown_value: string; value: number }> {
  return rows.flatMap((r) => keys.map((bucket, i) => ({ bucket, breakdown_value: String(r.breakdown_value), value: Number(r[`c${i}`] ?? 0) })))
}

/**
 * The top `limit` breakdown values of a series plan (by the sum of its values over the range,
 * PostHog's order), plus one more when there are more: rows `{breakdown_value, total}`.
 */
export function topBreakdownsPlan(series: Plan, limit: number): Plan {
  const totals: Plan = {
    source: fromPlan(series),
    select: [{ alias: 'breakdown_value', expr: col('breakdown_value') }, { alias: 'total', expr: { op: 'aggregate', fn: 'sum', arg: col('value') } }],
    groupBy: [col('breakdown_value')],
  }
  return {
    source: fromPlan(totals),
    select: [{ alias: 'breakdown_value', expr: col('breakdown_value') }, { alias: 'total', expr: col('total') }],
    orderBy: [{ expr: col('total'), desc: true }, { expr: col('breakdown_value') }],
    limit: limit + 1,
  }
}

/** The breakdown value, with every value outside `top` folded into PostHog's "other". */
export function foldedBreakdown(b: Breakdown, top: readonly string[]): Expr {
  const value = breakdownExpr(b)
  return { op: 'case', when: [[{ op: 'in', arg: value, values: [...top] }, value]], else: { op: 'literal', value: BREAKDOWN_OTHER } }
}
