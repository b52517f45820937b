import { shiftInstant, type Interval, type ResolvedRange } from './date-range.ts'
import { and, col, fromEvents, fromPlan, timeBetween, type Expr, type Plan } from './query-plan.ts'
import type { Breakdown, MathType, Series } from './trends-query.ts'

export const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$'
export const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$'

const QUANTILE: Partial<Record<MathType, number>> = { median: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99 }

/** How many intervals a rolling active-users window spans (weekly/monthly active). */
function activeWindow(math: MathType, interval: Interval): number {
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
  const value: Expr = { op: 'property', source: b.type, key: b.key }
  const missing: Expr = { op: 'or', args: [{ op: 'is_null', arg: value }, { op: 'binary', fn: '=', left: value, right: { op: 'literal', value: '' } }] }
  return { op: 'case', when: [[missing, { op: 'literal', value: BREAKDOWN_NULL }]], else: value }
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

/**
 * Rows `{bucket (epoch ms), breakdown_value, value}` of one series: events of the range grouped by
 * the interval (in the project's zone) and breakdown value, the math computed in the store. Weekly
 * and monthly active users count each person for the window of intervals after each active one.
 */
export function seriesPlan(input: SeriesPlanInput): Plan {
  const { series, range, breakdown } = input
  const window = series.math === 'weekly_active' || series.math === 'monthly_active' ? activeWindow(series.math, range.interval) : 1
  const bd: Expr = breakdown ?? { op: 'literal', value: '' }
  if (window > 1 && !input.aggregated) return activeUsersPlan(input, window, bd)
  const bucket: Expr = { op: 'epoch_ms', arg: { op: 'bucket', interval: range.interval, timeZone: range.timeZone, arg: col('timestamp') } }
  const keys = input.aggregated ? [{ alias: 'bucket', expr: { op: 'literal', value: 0 } as Expr }] : [{ alias: 'bucket', expr: bucket }]
  return {
    source: fromEvents(),
    select: [...keys, { alias: 'breakdown_value', expr: bd }, { alias: 'value', expr: mathExpr(series) }],
    where: and(timeBetween(range.from, range.to), input.match, mathWhere(series)),
    groupBy: input.aggregated ? [bd] : [bucket, bd],
  }
}

function activeUsersPlan(input: SeriesPlanInput, window: number, bd: Expr): Plan {
  const { range } = input
  const tz = range.timeZone
  const start = shiftInstant(range.from, range.interval, -(window - 1), tz)
  const bucket: Expr = { op: 'bucket', interval: range.interval, timeZone: tz, arg: col('timestamp') }
  const active: Plan = {
    source: fromEvents(),
    select: [{ alias: 'person', expr: { op: 'person_id' } }, { alias: 'active', expr: bucket }, { alias: 'breakdown_value', expr: bd }],
    where: and(timeBetween(start, range.to), input.match),
    groupBy: [{ op: 'person_id' }, bucket, bd],
  }
  const target: Expr = { op: 'shift', interval: range.interval, n: col('k'), timeZone: tz, arg: col('active') }
  const spread: Plan = {
    source: { kind: 'spread', plan: active, times: window },
    select: [{ alias: 'person', expr: col('person') }, { alias: 'target', expr: target }, { alias: 'breakdown_value', expr: col('breakdown_value') }],
  }
  return {
    source: fromPlan(spread),
    select: [
      { alias: 'bucket', expr: { op: 'epoch_ms', arg: col('target') } },
      { alias: 'breakdown_value', expr: col('breakdown_value') },
      { alias: 'value', expr: { op: 'aggregate', fn: 'uniq', arg: col('person') } },
    ],
    where: and({ op: 'binary', fn: '>=', left: col('target'), right: { op: 'time', value: range.from } }, { op: 'binary', fn: '<', left: col('target'), right: { op: 'time', value: range.to } }),
    groupBy: [col('target'), col('breakdown_value')],
  }
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
