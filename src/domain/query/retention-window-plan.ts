import { bucketKey, offsetSegments } from './bucket-keys.ts'
import type { ResolvedRange } from './date-range.ts'
import { and, col, fromEvents, fromPlan, lit, when, type AggregateFn, type Expr, type Plan } from './query-plan.ts'
import type { RetentionQuery } from './retention.ts'
import { actorOf } from './actor.ts'
import { gridPlan, type RetentionMatch } from './retention-plan.ts'

const HOUR = 3_600_000
const DAY = 86_400_000

/**
 * PostHog's windows per period (`RetentionRollingIntervalBaseQueryBuilder`): the unit whose
 * boundaries are counted, as ClickHouse's `dateDiff` counts them in the project's zone, and how
 * many units make one window. A month is 30 days.
 */
const WINDOWS = {
  hour: { unit: 'hour', units: 1 },
  day: { unit: 'hour', units: 24 },
  week: { unit: 'day', units: 7 },
  month: { unit: 'day', units: 30 },
} as const

/**
 * The retention grid with `24_hour_windows`, as PostHog's rolling builder computes it. Each actor
 * has one start instant t0: its first target event in the range (recurring), or its first ever
 * (first time; first-ever occurrence: only when that first event also matches the entity's
 * filters). Its cohort is `floor(units(range start, t0) / n)` and a returning event at t counts in
 * window `floor(units(t0, t) / n)`, where `units` counts the unit's boundaries crossed (local hours
 * or local days) and n is the window's length in units: a day is 24 hour boundaries, not 24 hours
 * to the millisecond. Value 0 is the cohort's size. Recurring reads the range's events only; first
 * time reads the target's whole history and, as PostHog, returns after the range's end too.
 * `minimumOccurrences` plays no part here, as in PostHog's rolling builder.
 */
export function rollingRetentionPlan(q: RetentionQuery, range: ResolvedRange, m: RetentionMatch): Plan {
  return gridPlan(rollingRetentionCohortsPlan(q, range, m), q)
}

/** The rows `rollingRetentionPlan`'s grid counts: `{actor, c, back}`, one per actor (its one cohort). */
export function rollingRetentionCohortsPlan(q: RetentionQuery, range: ResolvedRange, m: RetentionMatch): Plan {
  const { unit, units } = WINDOWS[q.interval]
  const windowMs = units * (unit === 'hour' ? HOUR : DAY)
  const recurring = q.mode === 'recurring'
  // No event later than this can fall in the look-ahead of a cohort of the range (2 days spare for zone offsets).
  const end = recurring ? range.to : new Date(range.to.getTime() + q.totalIntervals * windowMs + 2 * DAY)
  const offsets = offsetSegments(new Date(range.from.getTime() - 32 * DAY), end, range.timeZone)
  const inRange: Expr = { op: 'binary', fn: '>=', left: col('timestamp'), right: { op: 'time', value: range.from } }
  const isTarget = m.target ?? lit(true)
  const isReturn = m.returning ?? lit(true)
  const targetAny = m.targetAnyProperties ?? lit(true)
  const { actor, hasActor } = actorOf(q.groupTypeIndex)
  const perEvent: Plan = {
    source: fromEvents(),
    select: [
      { alias: 'actor', expr: actor },
      { alias: 'is_target', expr: isTarget },
      { alias: 'is_return', expr: isReturn },
      { alias: 'ts', expr: col('timestamp') },
      // The unit's key: hour keys are the instants local hours start, day keys local dates; both evenly spaced.
      { alias: 'u', expr: { op: 'bucket', interval: unit, offsets, arg: col('timestamp') } },
      ...(q.mode === 'first_ever' ? [{ alias: 'is_target_any', expr: targetAny }] : []),
    ],
    where: and(
      { op: 'binary', fn: '<', left: col('timestamp'), right: { op: 'time', value: end } },
      recurring ? inRange : undefined,
      { op: 'or', args: [q.mode === 'first_ever' ? targetAny : isTarget, isReturn] },
      hasActor,
    ),
  }
  // Each event beside its actor's t0 (and the unit key of t0: keys grow with time, so the least key of a target event).
  const overActor = (fn: AggregateFn, arg: Expr): Expr => ({ op: 'window', fn, arg, partitionBy: [col('actor')], orderBy: [] })
  const withStart: Plan = {
    source: fromPlan(perEvent),
    select: [
      { alias: 'actor', expr: col('actor') },
      { alias: 'is_return', expr: col('is_return') },
      { alias: 'ts', expr: col('ts') },
      { alias: 'u', expr: col('u') },
      { alias: 't0', expr: overActor('min', when(col('is_target'), col('ts'))) },
      { alias: 'u0', expr: overActor('min', when(col('is_target'), col('u'))) },
      ...(q.mode === 'first_ever' ? [{ alias: 't_any', expr: overActor('min', when(col('is_target_any'), col('ts'))) }] : []),
    ],
  }
  const windowsBetween = (from: Expr, to: Expr): Expr => ({
    op: 'floor',
    arg: { op: 'binary', fn: '/', left: { op: 'binary', fn: '-', left: to, right: from }, right: lit(windowMs) },
  })
  const c = windowsBetween(lit(bucketKey(range.from, unit, range.timeZone)), col('u0'))
  const k = windowsBetween(col('u0'), col('u'))
  const counted = and(col('is_return'), { op: 'binary', fn: '>=', left: col('ts'), right: col('t0') }, { op: 'binary', fn: '<', left: k, right: lit(q.totalIntervals) })!
  return {
    source: fromPlan(withStart),
    select: [
      { alias: 'actor', expr: col('actor') },
      { alias: 'c', expr: c },
      { alias: 'back', expr: { op: 'aggregate', fn: 'bit_or', arg: when(counted, { op: 'bit_flag', index: k }) } },
    ],
    where: and(
      { op: 'not', arg: { op: 'is_null', arg: col('t0') } },
      q.mode === 'first_ever' ? { op: 'binary', fn: '=', left: col('t0'), right: col('t_any') } : undefined,
      // Cohorts outside the range's rows are not reported (a t0 before it, or past it by the hour count).
      { op: 'binary', fn: '>=', left: c, right: lit(0) },
      { op: 'binary', fn: '<', left: c, right: lit(range.buckets.length) },
    ),
    groupBy: [col('actor'), c],
  }
}
