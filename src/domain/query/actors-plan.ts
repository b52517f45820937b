import type { ActorOrder, ActorStat } from './actors-query.ts'
import { timestampBucket } from './trends-plan.ts'
import type { ResolvedRange } from './date-range.ts'
import { and, bin, col, fromEvents, fromPlan, lit, timeBetween, type Expr, type Plan } from './query-plan.ts'

/**
 * The actors behind an insight's number: a plan with one row per actor, `actor` (a person's uuid or
 * a group key) and the statistics `stats` it offers, computed in the event store.
 */
export interface ActorSet {
  plan: Plan
  /** Groups of this type are the actors (null: persons). */
  groupTypeIndex: number | null
  stats: readonly ActorStat[]
  /** Retention: the period columns it offers (`day_0`...), the period's name and the look-ahead's length. */
  periods?: { name: string; count: number }
}


/**
 * Which funnel actors a step names, on `funnelPersonsPlan`'s 0-based `level` (PostHog's
 * `_get_funnel_person_step_condition`, whose `step_reached` is the same level): `funnelStep` N > 0
 * reached step N (1-based; 0 is everyone), N < 0 reached step |N|-1 but not |N| (dropped off before
 * it); `funnelCustomSteps` the levels listed (1-based).
 */
export function funnelStepCondition(step: { funnelStep: number } | { customSteps: number[] }): Expr {
  if ('customSteps' in step) return { op: 'in', arg: col('level'), values: step.customSteps.map((s) => s - 1) }
  const n = step.funnelStep
  return n >= 0 ? bin('>=', col('level'), lit(n - 1)) : bin('=', col('level'), lit(-n - 2))
}

/** Actors of `funnelPersonsPlan`'s rows that pass `where` (not excluded is the caller's condition), once each. */
export function funnelActorsPlan(persons: Plan, where: Expr): Plan {
  return { source: fromPlan(persons), select: [{ alias: 'actor', expr: col('person') }], where, groupBy: [col('person')] }
}

/**
 * Actors of the events passing `where` (PostHog's trends actors query: `count()` as `event_count`,
 * `max(timestamp)` as `last_seen`, and for persons the distinct ids the events came from).
 */
export function eventActorsPlan(actor: Expr, where: Expr, persons: boolean): Plan {
  return {
    source: fromEvents(),
    select: [
      { alias: 'actor', expr: actor },
      { alias: 'event_count', expr: { op: 'aggregate', fn: 'count' } },
      { alias: 'last_seen', expr: { op: 'aggregate', fn: 'max', arg: col('timestamp') } },
      ...(persons ? [{ alias: 'event_distinct_ids', expr: { op: 'aggregate', fn: 'list', arg: col('distinct_id'), distinct: true } as Expr }] : []),
    ],
    where,
    groupBy: [actor],
  }
}

/** The stats `eventActorsPlan` offers. */
export function eventActorStats(persons: boolean): ActorStat[] {
  return persons ? ['event_count', 'last_seen', 'event_distinct_ids'] : ['event_count', 'last_seen']
}

/**
 * Stickiness actors (PostHog's `StickinessQueryRunner.to_actors_query`): persons active in exactly
 * (`gte`: at least, `lte`: at most) `intervals` intervals of the range, with their event count.
 */
export function stickinessActorsPlan(match: Expr | undefined, range: ResolvedRange, intervals: number, operator: 'exact' | 'gte' | 'lte'): Plan {
  const active: Expr = { op: 'aggregate', fn: 'count', arg: timestampBucket(range), distinct: true }
  const person: Expr = { op: 'person_id' }
  return {
    source: fromEvents(),
    select: [{ alias: 'actor', expr: person }, { alias: 'event_count', expr: { op: 'aggregate', fn: 'count' } }, { alias: 'last_seen', expr: { op: 'aggregate', fn: 'max', arg: col('timestamp') } }],
    where: and(timeBetween(range.from, range.to), match, { op: 'not', arg: { op: 'is_null', arg: person } }),
    groupBy: [person],
    having: bin(operator === 'exact' ? '=' : operator === 'gte' ? '>=' : '<=', active, lit(intervals)),
  }
}

/**
 * Retention actors (PostHog's `RetentionQueryRunner.to_actors_query`) from the rows the grid counts
 * (`retentionCohortsPlan`: `{actor, c, back}`): the actors of cohort row `cohort`, each with
 * `appearances`, the periods after the cohort's start (0-based, ascending) the grid counts it in:
 * 0 always (value 0 is the cohort's size), k in 1..`totalIntervals`-1 when bit k of its return word
 * is set; and `appearance_count`, their number. As in PostHog, the periods are the plain returns
 * even for a cumulative grid.
 */
export function retentionActorsPlan(cohorts: Plan, cohort: number, totalIntervals: number): Plan {
  const inCohort: Plan = { source: fromPlan(cohorts), select: [{ alias: 'actor', expr: col('actor') }, { alias: 'back', expr: col('back') }], where: bin('=', col('c'), lit(cohort)) }
  const k = col('k')
  const returned: Expr = { op: 'bits_any', arg: { op: 'bits_shift_right', arg: col('back'), by: k }, mask: '1' }
  // Each actor once per period of the look-ahead (k), kept where the grid counts it.
  const periods: Plan = {
    source: { kind: 'spread', plan: inCohort, times: totalIntervals },
    select: [{ alias: 'actor', expr: col('actor') }, { alias: 'k', expr: k }],
    where: { op: 'or', args: [bin('=', k, lit(0)), returned] },
  }
  return {
    source: fromPlan(periods),
    select: [
      { alias: 'actor', expr: col('actor') },
      { alias: 'appearances', expr: { op: 'aggregate', fn: 'list', arg: k, by: k } },
      { alias: 'appearance_count', expr: { op: 'aggregate', fn: 'count' } },
    ],
    groupBy: [col('actor')],
  }
}

/**
 * A page of an actor set ordered in the event store (orders by statistics or the actor id only),
 * then by actor id for a stable page; one row more than `limit` tells whether there are more.
 */
export function actorsPagePlan(set: ActorSet, order: readonly ActorOrder[], page: { limit: number; offset: number }): Plan {
  // Actor ids in their text order (PostHog's): ClickHouse orders a UUID by its two halves swapped.
  const actorText: Expr = { op: 'to_text', arg: col('actor') }
  const key = (o: ActorOrder): Expr => (o.key === 'actor_id' ? actorText : col(o.key))
  return {
    source: fromPlan(set.plan),
    select: [{ alias: 'actor', expr: col('actor') }, ...set.stats.map((s) => ({ alias: s, expr: col(s) }))],
    orderBy: [...order.map((o) => ({ expr: key(o), desc: o.desc })), { expr: actorText }],
    limit: page.limit + 1,
    offset: page.offset,
  }
}
