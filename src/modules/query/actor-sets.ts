import { actorOf } from '../../domain/query/actor.ts'
import { eventActorStats, eventActorsPlan, funnelActorsPlan, funnelStepCondition, retentionActorsPlan, stickinessActorsPlan, type ActorSet } from '../../domain/query/actors-plan.ts'
import { readBreakdownValue } from '../../domain/query/actors-query.ts'
import { bucketKey, rangeKeys } from '../../domain/query/bucket-keys.ts'
import { previousPeriod, resolveInstant, shiftInstant, startOfInterval, type ResolvedRange } from '../../domain/query/date-range.ts'
import { funnelBreakdownValuesPlan } from '../../domain/query/funnels/funnel-aggregates.ts'
import { funnelPersonsPlan } from '../../domain/query/funnels/funnel-plan.ts'
import { readArray, readChoice, readFlag, readInteger, readNode, readText, type Node } from '../../domain/query/query-fields.ts'
import { and, col, eq, fromPlan, lit, timeBetween, type Expr } from '../../domain/query/query-plan.ts'
import { lifecycleStatusesPlan, LIFECYCLE_STATUSES, readPersonsQuery } from '../../domain/query/stickiness-lifecycle.ts'
import { activeWindow, BREAKDOWN_OTHER, breakdownExpr, isRolling, seriesPlan, timestampBucket, topBreakdownsPlan } from '../../domain/query/trends-plan.ts'
import { AGGREGATED_DISPLAYS, readTrendsQuery, type Breakdown } from '../../domain/query/trends-query.ts'
import { validationError } from '../../shared/errors.ts'
import type { QueryContext } from './query-context.ts'
import { QUERY_KINDS, queryKind } from './query-kinds.ts'
import { loadCohorts, queryFilters, resolveRange, seriesMatch, withGroupValues } from './query-helpers.ts'
import { readFunnel } from './run-funnels-query.ts'
import { readRetention } from './run-retention-query.ts'

const notExcluded: Expr = { op: 'not', arg: col('excluded') }

/**
 * The actor set an actors query's `source` names (`attr` is its path, `query.source`):
 * `FunnelsActorsQuery` over a funnel, `InsightActorsQuery` over a trends or stickiness insight.
 * Kinds not built yet are a 400 naming the kind's field.
 */
export async function actorSetOf(ctx: QueryContext, source: Node, attr: string): Promise<ActorSet> {
  const inner = readNode(source.source, `${attr}.source`)
  const innerKind = typeof inner.kind === 'string' ? inner.kind : undefined
  if (source.kind === 'FunnelsActorsQuery') {
    if (innerKind !== 'FunnelsQuery') throw validationError(`${attr}.source.kind`, `A FunnelsActorsQuery needs a FunnelsQuery source, not "${innerKind}".`, 'invalid_input')
    return funnelActors(ctx, source, inner, attr)
  }
  if (source.kind !== 'InsightActorsQuery' && source.kind !== 'StickinessActorsQuery') {
    throw validationError(`${attr}.kind`, `Actors of a "${String(source.kind)}" are not supported (supported: InsightActorsQuery, FunnelsActorsQuery).`, 'invalid_input')
  }
  const actors = queryKind(innerKind)?.actors
  if (actors) return actors(ctx, source, inner, attr)
  const supported = [...QUERY_KINDS.values()].filter((k) => k.actors).map((k) => k.kind).join(', ')
  throw validationError(`${attr}.source.kind`, `Actors of a "${String(innerKind)}" are not supported yet (supported: ${supported}; FunnelsQuery through a FunnelsActorsQuery).`, 'invalid_input')
}

/** PostHog's funnel actors (`funnel_udf.py` `actor_query`, `funnel_trends_udf.py` for conversion trends). */
async function funnelActors(ctx: QueryContext, node: Node, source: Node, attr: string): Promise<ActorSet> {
  const { q, spec } = await readFunnel(ctx, source, `${attr}.source`)
  const set = (where: Expr, persons = funnelPersonsPlan(spec)): ActorSet => ({ plan: funnelActorsPlan(persons, where), groupTypeIndex: q.groupTypeIndex, stats: [] })
  const breakdownAttr = `${attr}.funnelStepBreakdown`
  const hasBreakdownValue = node.funnelStepBreakdown !== undefined && node.funnelStepBreakdown !== null
  if (hasBreakdownValue && !q.breakdown) throw validationError(breakdownAttr, 'The funnel has no breakdown to pick a value of.', 'invalid_input')
  const value = hasBreakdownValue ? readBreakdownValue(node.funnelStepBreakdown, breakdownAttr) : null

  if (q.vizType === 'trends') {
    if (node.funnelTrendsDropOff === undefined || node.funnelTrendsDropOff === null) {
      throw validationError(`${attr}.funnelTrendsDropOff`, 'Funnel trends actors need funnelTrendsDropOff.', 'required')
    }
    const dropOff = readFlag(node.funnelTrendsDropOff, `${attr}.funnelTrendsDropOff`)
    const startText = readText(node.funnelTrendsEntrancePeriodStart, `${attr}.funnelTrendsEntrancePeriodStart`)!
    const { range } = spec
    const start = startOfInterval(resolveInstant(startText, ctx.now, ctx.timeZone, `${attr}.funnelTrendsEntrancePeriodStart`), range.interval, range.timeZone)
    const persons = funnelPersonsPlan({ ...spec, entries: { entryBucket: timestampBucket(range), keys: rangeKeys(range) } })
    const reached = (step: number): Expr => ({ op: 'binary', fn: '>=', left: col('level'), right: lit(step) })
    // The chart's numbers (conversionTrendsPlan): entered = reached funnelFromStep, converted = reached funnelToStep.
    const outcome: Expr = dropOff ? and(reached(q.fromStep), { op: 'not', arg: reached(q.toStep) })! : reached(q.toStep)
    const byValue: Expr | undefined = value === null ? undefined : eq(col('b'), lit(value))
    return set(and(notExcluded, eq(col('ek'), lit(bucketKey(start, range.interval, range.timeZone))), outcome, byValue)!, persons)
  }

  const persons = funnelPersonsPlan(spec)
  let byValue: Expr | undefined
  if (value !== null && value === BREAKDOWN_OTHER) {
    // The values the steps list shows apart (funnelSteps' ranking); "other" is every other value.
    const limit = q.breakdown!.limit
    const top = (await ctx.run(funnelBreakdownValuesPlan(persons, limit + 1))).rows.map((r) => String(r.value))
    byValue = top.length > limit ? { op: 'not', arg: { op: 'in', arg: col('b'), values: top.slice(0, limit) } } : lit(false)
  } else if (value !== null) {
    byValue = eq(col('b'), lit(value))
  }
  return set(and(notExcluded, funnelStepCondition(readFunnelStep(node, attr, q.steps.length)), byValue)!, persons)
}

function readFunnelStep(node: Node, attr: string, steps: number): { funnelStep: number } | { customSteps: number[] } {
  if (node.funnelCustomSteps !== undefined && node.funnelCustomSteps !== null) {
    const list = readArray(node.funnelCustomSteps, `${attr}.funnelCustomSteps`).map((s, i) => readInteger(s, `${attr}.funnelCustomSteps.${i}`, { min: 1, max: steps })!)
    if (list.length > 0) return { customSteps: list }
  }
  const funnelStep = readInteger(node.funnelStep, `${attr}.funnelStep`, { min: -(steps + 1), max: steps })
  if (funnelStep === undefined) throw validationError(`${attr}.funnelStep`, 'Funnel actors need funnelStep (or funnelCustomSteps).', 'required')
  // PostHog's rule: steps count from 1, and the first drop-off is -2 (dropped before step 2).
  if (funnelStep === 0 || funnelStep === -1) {
    throw validationError(`${attr}.funnelStep`, 'Funnel steps count from 1 (converted) and from -2 (dropped off before step 2).', 'invalid_input')
  }
  return { funnelStep }
}

/**
 * PostHog's trends actors (`trends_actors_query_builder.py`): the persons (or groups, for
 * `unique_group`) with events of series `series` in the interval starting at `day` (for weekly and
 * monthly active, the window of intervals up to it, as the chart counts them), of one breakdown
 * value, in the current or previous period; the whole range for aggregated displays.
 */
export async function trendsActors(ctx: QueryContext, node: Node, source: Node, attr: string): Promise<ActorSet> {
  const q = readTrendsQuery(source, `${attr}.source`)
  q.breakdown = await withGroupValues(ctx, q.breakdown, `${attr}.source.breakdownFilter.breakdown`)
  const filters = queryFilters(ctx, q)
  const cohorts = await loadCohorts(ctx, [filters.properties, filters.testAccounts, ...q.series.map((s) => s.properties)])
  const range = await resolveRange(ctx, q.dateRange, q.interval)
  const index = readInteger(node.series, `${attr}.series`, { min: 0, max: q.series.length - 1, fallback: 0 })!
  const series = q.series[index]!
  const { match } = await seriesMatch(ctx, series, `${attr}.source.series.${index}`, filters, cohorts)
  const compare = readChoice(node.compare, `${attr}.compare`, ['current', 'previous'] as const, 'current')
  const period = q.compare && compare === 'previous' ? previousPeriod(range) : range
  const aggregated = AGGREGATED_DISPLAYS.includes(q.display)
  const groupTypeIndex = series.math === 'unique_group' ? series.mathGroupTypeIndex : null
  const { actor, hasActor } = actorOf(groupTypeIndex)
  const window = aggregated ? aggregatedWindow(node, period, attr) : dayWindow(ctx, node, range, period, attr, isRolling(series, range.interval) ? activeWindow(series.math, range.interval) : 1)
  let byValue: Expr | undefined
  if (node.breakdown !== undefined && node.breakdown !== null) {
    if (!q.breakdown) throw validationError(`${attr}.breakdown`, 'The insight has no breakdown to pick a value of.', 'invalid_input')
    byValue = await trendsBreakdownCondition(ctx, q.breakdown, readBreakdownValue(node.breakdown, `${attr}.breakdown`), { series, match, range: period, aggregated })
  }
  const persons = groupTypeIndex === null
  return { plan: eventActorsPlan(actor, and(timeBetween(window.from, window.to), match, hasActor, byValue)!, persons), groupTypeIndex, stats: eventActorStats(persons) }
}

function aggregatedWindow(node: Node, period: ResolvedRange, attr: string): { from: Date; to: Date } {
  if (node.day !== undefined && node.day !== null) throw validationError(`${attr}.day`, 'A `day` is forbidden for trends actors queries with total value aggregation.', 'invalid_input')
  return { from: period.from, to: period.to }
}

/** The events behind one point: its interval (in the previous period, the interval at the same place), `window` intervals back. */
function dayWindow(ctx: QueryContext, node: Node, range: ResolvedRange, period: ResolvedRange, attr: string, window: number): { from: Date; to: Date } {
  if (node.day === undefined || node.day === null) throw validationError(`${attr}.day`, 'A `day` is required for trends actors queries without total value aggregation.', 'required')
  const text = typeof node.day === 'number' ? String(node.day) : readText(node.day, `${attr}.day`)!
  const at = startOfInterval(resolveInstant(text, ctx.now, ctx.timeZone, `${attr}.day`), range.interval, range.timeZone)
  const i = range.buckets.findIndex((b) => b.getTime() === at.getTime())
  const start = period.buckets[i]
  if (i < 0 || !start) throw validationError(`${attr}.day`, `"${text}" is not an interval of the insight's date range.`, 'invalid_input')
  const end = shiftInstant(start, range.interval, 1, range.timeZone)
  const from = window > 1 ? shiftInstant(start, range.interval, -(window - 1), range.timeZone) : start
  return { from, to: end.getTime() < period.to.getTime() ? end : period.to }
}

/** Events of one breakdown value; "other" is every value but the top ones the chart shows apart (its ranking). */
async function trendsBreakdownCondition(
  ctx: QueryContext,
  b: Breakdown,
  value: string,
  input: { series: Parameters<typeof seriesPlan>[0]['series']; match: Expr | undefined; range: ResolvedRange; aggregated: boolean },
): Promise<Expr> {
  const expr = breakdownExpr(b)
  if (value !== BREAKDOWN_OTHER) return eq(expr, lit(value))
  const top = (await ctx.run(topBreakdownsPlan(seriesPlan({ ...input, breakdown: expr }), b.limit))).rows.map((r) => String(r.breakdown_value))
  return top.length > b.limit ? { op: 'not', arg: { op: 'in', arg: expr, values: top.slice(0, b.limit) } } : lit(false)
}

/** PostHog's stickiness actors: persons active in `day` intervals of the range (`operator` gte/lte/exact, default exact). */
export async function stickinessActors(ctx: QueryContext, node: Node, source: Node, attr: string): Promise<ActorSet> {
  const q = readPersonsQuery(source, 'StickinessQuery', `${attr}.source`)
  const filters = queryFilters(ctx, q)
  const cohorts = await loadCohorts(ctx, [filters.properties, filters.testAccounts, ...q.series.map((s) => s.properties)])
  const range = await resolveRange(ctx, q.dateRange, q.interval, { hourlyDateOnlyEndsAtMidnight: true })
  const index = readInteger(node.series, `${attr}.series`, { min: 0, max: q.series.length - 1, fallback: 0 })!
  const { match } = await seriesMatch(ctx, q.series[index]!, `${attr}.source.series.${index}`, filters, cohorts)
  const day = readInteger(node.day, `${attr}.day`, { min: 1 })
  if (day === undefined) throw validationError(`${attr}.day`, 'Stickiness actors need `day`: the number of intervals.', 'required')
  const operator = readChoice(node.operator, `${attr}.operator`, ['exact', 'gte', 'lte'] as const, 'exact')
  return { plan: stickinessActorsPlan(match, range, day, operator), groupTypeIndex: null, stats: ['event_count', 'last_seen'] }
}

/**
 * PostHog's lifecycle actors (`LifecycleQueryRunner.to_actors_query`): the persons with lifecycle
 * `status` in the interval starting at `day` (each filter only when given), as the chart counts them.
 */
export async function lifecycleActors(ctx: QueryContext, node: Node, source: Node, attr: string): Promise<ActorSet> {
  const q = readPersonsQuery(source, 'LifecycleQuery', `${attr}.source`)
  const series = q.series[0]!
  const filters = queryFilters(ctx, q)
  const cohorts = await loadCohorts(ctx, [filters.properties, filters.testAccounts, series.properties])
  const range = await resolveRange(ctx, q.dateRange, q.interval)
  const { match } = await seriesMatch(ctx, series, `${attr}.source.series.0`, filters, cohorts)
  const status = node.status === undefined || node.status === null ? undefined : readChoice(node.status, `${attr}.status`, LIFECYCLE_STATUSES)
  let at: Expr | undefined
  if (node.day !== undefined && node.day !== null) {
    const start = startOfInterval(resolveInstant(readText(node.day, `${attr}.day`)!, ctx.now, ctx.timeZone, `${attr}.day`), range.interval, range.timeZone)
    at = eq(col('at'), lit(bucketKey(start, range.interval, range.timeZone)))
  }
  const plan = { source: fromPlan(lifecycleStatusesPlan(match, range)), select: [{ alias: 'actor', expr: col('person') }], where: and(at, status ? eq(col('status'), lit(status)) : undefined), groupBy: [col('person')] }
  return { plan, groupTypeIndex: null, stats: [] }
}

/**
 * PostHog's retention actors (`RetentionQueryRunner.to_actors_query`): the actors of cohort row
 * `interval` (0-based), read from the rows the grid counts, so they are exactly row `interval`'s
 * value 0, each with the periods it appears in (`appearances`, and `day_0`... flags).
 */
export async function retentionActors(ctx: QueryContext, node: Node, source: Node, attr: string): Promise<ActorSet> {
  const { q, range, cohorts } = await readRetention(ctx, source, `${attr}.source`)
  if (node.breakdown !== undefined && node.breakdown !== null) throw validationError(`${attr}.breakdown`, 'Retention breakdowns are not supported yet.', 'invalid_input')
  if (node.interval === undefined || node.interval === null) throw validationError(`${attr}.interval`, 'Retention actors need `interval`: the cohort row (0-based).', 'required')
  const interval = readInteger(node.interval, `${attr}.interval`, { min: 0, max: range.buckets.length - 1 })!
  return {
    plan: retentionActorsPlan(cohorts, interval, q.totalIntervals),
    groupTypeIndex: q.groupTypeIndex,
    stats: ['appearances', 'appearance_count'],
    periods: { name: q.interval, count: q.totalIntervals },
  }
}
