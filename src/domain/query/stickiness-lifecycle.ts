import { validationError } from '../../shared/errors.ts'
import { bucketDay, bucketLabel, type ResolvedRange } from './date-range.ts'
import { rangeKeys } from './bucket-keys.ts'
import { timestampBucket } from './trends-plan.ts'
import { readArray, readFlag, readNode, type Node } from './query-fields.ts'
import { and, col, fromEvents, fromPlan, lit, timeBetween, type Expr, type Plan } from './query-plan.ts'
import { readDateRange, readInterval, readSeries, type Series } from './trends-query.ts'
import type { DateRangeInput, Interval } from './date-range.ts'

export interface PersonsQuery {
  series: Series[]
  interval: Interval
  dateRange: DateRangeInput | undefined
  properties: unknown
  /** PostHog's `filterTestAccounts`: the project's `test_account_filters` apply to every event read. */
  filterTestAccounts: boolean
  /** Stickiness `compareFilter.compare`: the previous period as well. */
  compare: boolean
}

/** Reads a `StickinessQuery` or `LifecycleQuery` (series counted by persons; lifecycle takes one series). */
export function readPersonsQuery(node: Node, kind: 'StickinessQuery' | 'LifecycleQuery', attr = 'query'): PersonsQuery {
  const series = readArray(node.series, `${attr}.series`).map((s, i) => readSeries(s, `${attr}.series.${i}`, { maths: ['total', 'dau'] }))
  if (series.length === 0) throw validationError(`${attr}.series`, 'At least one series is required.', 'required')
  if (kind === 'LifecycleQuery' && series.length > 1) throw validationError(`${attr}.series`, 'A lifecycle query takes exactly one series.', 'invalid_input')
  readNode(node.stickinessFilter ?? node.lifecycleFilter, `${attr}.${kind === 'LifecycleQuery' ? 'lifecycleFilter' : 'stickinessFilter'}`, { optional: true })
  const compareFilter = kind === 'StickinessQuery' ? readNode(node.compareFilter, `${attr}.compareFilter`, { optional: true }) : undefined
  return {
    series,
    interval: readInterval(node.interval, `${attr}.interval`),
    dateRange: readDateRange(node.dateRange, `${attr}.dateRange`),
    properties: node.properties,
    filterTestAccounts: readFlag(node.filterTestAccounts, `${attr}.filterTestAccounts`),
    compare: readFlag(compareFilter?.compare, `${attr}.compareFilter.compare`),
  }
}

const notNullPerson: Expr = { op: 'not', arg: { op: 'is_null', arg: { op: 'person_id' } } }

/**
 * Stickiness: persons by the number of intervals of the range they were active in.
 * Rows `{intervals, persons}`.
 */
export function stickinessPlan(match: Expr | undefined, range: ResolvedRange): Plan {
  const bucket = timestampBucket(range)
  const perPerson: Plan = {
    source: fromEvents(),
    select: [{ alias: 'person', expr: { op: 'person_id' } }, { alias: 'intervals', expr: { op: 'aggregate', fn: 'count', arg: bucket, distinct: true } }],
    where: and(timeBetween(range.from, range.to), match, notNullPerson),
    groupBy: [{ op: 'person_id' }],
  }
  return {
    source: fromPlan(perPerson),
    select: [{ alias: 'intervals', expr: col('intervals') }, { alias: 'persons', expr: { op: 'aggregate', fn: 'count' } }],
    groupBy: [col('intervals')],
  }
}

/** PostHog's stickiness series: `data[i]` persons active in exactly i+1 intervals; `days` 1..N; `labels` "1 day"... */
export function shapeStickiness(rows: readonly Record<string, unknown>[], range: ResolvedRange) {
  const n = range.buckets.length
  const data = Array.from({ length: n }, () => 0)
  for (const r of rows) {
    const k = Number(r.intervals)
    if (k >= 1 && k <= n) data[k - 1] = Number(r.persons)
  }
  const unit = range.interval
  return { data, days: data.map((_, i) => i + 1), labels: data.map((_, i) => `${i + 1} ${unit}${i === 0 ? '' : 's'}`), count: data.reduce((a, b) => a + b, 0) }
}

export const LIFECYCLE_STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const

/**
 * Lifecycle, as PostHog computes it per person and interval: active in an interval and first seen
 * in it → new; active and active in the interval before → returning; active otherwise →
 * resurrecting; active in an interval but not in the next → dormant in the next (counted negative).
 * "First seen" is the person's first event of any kind (Tally has no person `created_at` on events).
 * Rows `{bucket (epoch ms), status, persons}`.
 */
export function lifecyclePlan(match: Expr | undefined, range: ResolvedRange): Plan {
  return {
    source: fromPlan(lifecycleStatusesPlan(match, range)),
    select: [{ alias: 'bucket', expr: col('at') }, { alias: 'status', expr: col('status') }, { alias: 'persons', expr: { op: 'aggregate', fn: 'count' } }],
    groupBy: [col('at'), col('status')],
  }
}

/** Each person's lifecycle status per interval of the range: rows `{person, at (bucket key), status}` (what `lifecyclePlan` counts). */
export function lifecycleStatusesPlan(match: Expr | undefined, range: ResolvedRange): Plan {
  const { interval } = range
  const keys = rangeKeys(range)
  const shift = (arg: Expr, n: number): Expr => ({ op: 'shift', interval, n, arg })
  // Reads every earlier event (first seen): the offsets cover all time before the range's end.
  const period = timestampBucket(range, earliestOffsetsFrom(range))
  const matched: Expr = match ? { op: 'case', when: [[match, lit(1)]], else: lit(0) } : lit(1)
  const activity: Plan = {
    source: fromEvents(),
    select: [{ alias: 'person', expr: { op: 'person_id' } }, { alias: 'period', expr: period }, { alias: 'matched', expr: { op: 'aggregate', fn: 'max', arg: matched } }],
    where: and({ op: 'binary', fn: '<', left: col('timestamp'), right: { op: 'time', value: range.to } }, notNullPerson),
    groupBy: [{ op: 'person_id' }, period],
  }
  const withFirst: Plan = {
    source: fromPlan(activity),
    select: [
      { alias: 'person', expr: col('person') }, { alias: 'period', expr: col('period') }, { alias: 'matched', expr: col('matched') },
      { alias: 'first', expr: { op: 'window', fn: 'min', arg: col('period'), partitionBy: [col('person')], orderBy: [] } },
    ],
  }
  const byPerson = { partitionBy: [col('person')], orderBy: [{ expr: col('period') }] }
  const active: Plan = {
    source: fromPlan(withFirst),
    select: [
      { alias: 'person', expr: col('person') }, { alias: 'period', expr: col('period') }, { alias: 'first', expr: col('first') },
      { alias: 'prev', expr: { op: 'window', fn: 'lag', arg: col('period'), ...byPerson } },
      { alias: 'next', expr: { op: 'window', fn: 'lead', arg: col('period'), ...byPerson } },
    ],
    where: { op: 'binary', fn: '=', left: col('matched'), right: lit(1) },
  }
  const k0: Expr = { op: 'binary', fn: '=', left: col('k'), right: lit(0) }
  const activeStatus: Expr = {
    op: 'case',
    when: [[{ op: 'binary', fn: '=', left: col('period'), right: col('first') }, lit('new')], [{ op: 'binary', fn: '=', left: col('prev'), right: shift(col('period'), -1) }, lit('returning')]],
    else: lit('resurrecting'),
  }
  const goesDormant: Expr = { op: 'or', args: [{ op: 'is_null', arg: col('next') }, { op: 'binary', fn: '!=', left: col('next'), right: shift(col('period'), 1) }] }
  const statuses: Plan = {
    source: { kind: 'spread', plan: active, times: 2 },
    select: [
      { alias: 'person', expr: col('person') },
      { alias: 'at', expr: { op: 'case', when: [[k0, col('period')]], else: shift(col('period'), 1) } },
      { alias: 'status', expr: { op: 'case', when: [[k0, activeStatus], [goesDormant, lit('dormant')]], else: lit(null) } },
    ],
  }
  return {
    source: fromPlan(statuses),
    select: [{ alias: 'person', expr: col('person') }, { alias: 'at', expr: col('at') }, { alias: 'status', expr: col('status') }],
    where: and(
      { op: 'not', arg: { op: 'is_null', arg: col('status') } },
      { op: 'binary', fn: '>=', left: col('at'), right: lit(keys[0]!) },
      { op: 'binary', fn: '<=', left: col('at'), right: lit(keys[keys.length - 1]!) },
    ),
  }
}

/**
 * Where lifecycle's zone offsets start: a year before the range (first-seen periods older than that
 * are only compared for equality with periods in the range, which they never equal).
 */
function earliestOffsetsFrom(range: ResolvedRange): Date {
  return new Date(range.from.getTime() - 366 * 86_400_000)
}

/** One series per status, in PostHog's order; dormant counts are negative. */
export function shapeLifecycle(rows: readonly Record<string, unknown>[], range: ResolvedRange) {
  const index = new Map(rangeKeys(range).map((k, i) => [k, i]))
  const days = range.buckets.map((b) => bucketDay(b, range.interval, range.timeZone))
  const labels = range.buckets.map((b) => bucketLabel(b, range.interval, range.timeZone))
  return LIFECYCLE_STATUSES.map((status) => {
    const data = range.buckets.map(() => 0)
    for (const r of rows) {
      const i = index.get(Number(r.bucket))
      if (r.status === status && i !== undefined) data[i] = (status === 'dormant' ? -1 : 1) * Number(r.persons)
    }
    return { status, data, days, labels, count: data.reduce((a, b) => a + b, 0) }
  })
}
