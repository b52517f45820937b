import { rangeKeys } from '../../domain/query/bucket-keys.ts'
import { conversionTimeBinsPlan, conversionTimeStatsPlan, conversionTrendsPlan, funnelBreakdownValuesPlan, funnelStepsPlan } from '../../domain/query/funnels/funnel-aggregates.ts'
import { funnelPersonsPlan, type FunnelSpec } from '../../domain/query/funnels/funnel-plan.ts'
import { binWidthMs, defaultBinCount, shapeConversionTrends, shapeSteps, shapeTimeToConvert, type FunnelStepName } from '../../domain/query/funnels/funnel-results.ts'
import { readFunnelsQuery, type FunnelsQuery } from '../../domain/query/funnels/funnels-query.ts'
import { and, col, lit, type Expr, type Plan } from '../../domain/query/query-plan.ts'
import { actorOf } from '../../domain/query/actor.ts'
import { filtersToExpr } from '../../domain/query/filter-expr.ts'
import { BREAKDOWN_OTHER, breakdownExpr, breakdownNone, timestampBucket } from '../../domain/query/trends-plan.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'
import { loadCohorts, queryFilters, resolveRange, resolvedRangeJson, seriesMatch, testAccountsExpr, withGroupValues } from './query-helpers.ts'

/** `FunnelsQuery`: steps (per breakdown value), time to convert, or conversion trends. */
export async function runFunnelsQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const { q, spec, names } = await readFunnel(ctx, node)
  const answer = { resolved_date_range: resolvedRangeJson(spec.range) }
  switch (q.vizType) {
    case 'steps':
      return { results: await funnelSteps(ctx, q, spec, names), ...answer }
    case 'time_to_convert':
      return { results: await timeToConvert(ctx, q, spec), ...answer }
    case 'trends':
      return { results: await conversionTrends(ctx, q, spec), ...answer }
  }
}

/**
 * A `FunnelsQuery` node read and resolved against the project (actions, cohorts, group values,
 * range): what `funnelPersonsPlan` needs, and each step's name. Errors name fields under `attr`.
 */
export async function readFunnel(ctx: QueryContext, node: QueryNode, attr = 'query'): Promise<{ q: FunnelsQuery; spec: FunnelSpec; names: FunnelStepName[] }> {
  const q = readFunnelsQuery(node, attr)
  q.breakdown = await withGroupValues(ctx, q.breakdown, `${attr}.breakdownFilter.breakdown`)
  const filters = queryFilters(ctx, q)
  const cohorts = await loadCohorts(ctx, [filters.properties, filters.testAccounts, ...q.steps.map((s) => s.properties), ...q.exclusions.map((x) => x.series.properties)])
  const range = await resolveRange(ctx, q.dateRange, q.interval)
  const queryProperties = filtersToExpr(filters.properties, `${attr}.properties`, cohorts)
  const names: FunnelStepName[] = []
  const steps: Expr[] = []
  for (const [i, series] of q.steps.entries()) {
    const { match, actionName } = await seriesMatch(ctx, series, `${attr}.series.${i}`, undefined, cohorts)
    names.push({ series, actionName })
    const step = match ?? lit(true)
    if (series.math !== 'first_time_for_user' && series.math !== 'first_time_for_user_with_filters') {
      steps.push(step)
      continue
    }
    // The actor's first event ever (no date range) of the step's event or action, or of the whole
    // step with its filters: only that event can do the step.
    const first = series.math === 'first_time_for_user_with_filters' ? (and(step, queryProperties) ?? step) : ((await seriesMatch(ctx, { ...series, properties: [] }, `${attr}.series.${i}`, undefined, cohorts)).match ?? lit(true))
    steps.push(and(step, { op: 'in_plan', arg: col('uuid'), plan: firstEventsPlan(first, actorOf(q.groupTypeIndex)) })!)
  }
  const exclusions = []
  for (const [i, x] of q.exclusions.entries()) {
    const { match } = await seriesMatch(ctx, x.series, `${attr}.funnelsFilter.exclusions.${i}`, undefined, cohorts)
    exclusions.push({ match: match ?? lit(true), fromStep: x.fromStep, toStep: x.toStep })
  }
  const breakdown = q.breakdown ? { value: breakdownExpr(q.breakdown), attribution: q.attribution, none: breakdownNone(q.breakdown) } : null
  // The query's properties and test-account filters apply to every event the funnel reads (PostHog's
  // FunnelEventQuery), not to steps alone: an event they leave out neither excludes nor breaks a strict funnel.
  const eventFilter = and(queryProperties, testAccountsExpr(filters, cohorts))
  const spec: FunnelSpec = { steps, exclusions, order: q.order, windowMs: q.windowMs, range, actor: actorOf(q.groupTypeIndex), breakdown, eventFilter }
  return { q, spec, names }
}

/** The uuid of each actor's first event matching `match`, over all of the project's events. */
function firstEventsPlan(match: Expr, actor: { actor: Expr; hasActor: Expr }): Plan {
  return {
    source: { kind: 'events' },
    select: [{ alias: 'uuid', expr: { op: 'aggregate', fn: 'arg_min', arg: col('uuid'), by: col('timestamp') } }],
    where: and(match, actor.hasActor),
    groupBy: [actor.actor],
  }
}

/**
 * Steps; with a breakdown, one step list per value, most entered first, the values past the limit
 * folded into PostHog's "other".
 */
async function funnelSteps(ctx: QueryContext, q: FunnelsQuery, spec: FunnelSpec, names: FunnelStepName[]) {
  const persons = funnelPersonsPlan(spec)
  if (!q.breakdown) {
    const { rows } = await ctx.run(funnelStepsPlan(persons, names.length, null))
    return shapeSteps(rows[0], names, { unordered: q.order === 'unordered' })
  }
  const limit = q.breakdown.limit
  const top = (await ctx.run(funnelBreakdownValuesPlan(persons, limit + 1))).rows.map((r) => String(r.value))
  const kept = top.slice(0, limit)
  const value: Expr = top.length > limit ? { op: 'case', when: [[{ op: 'in', arg: col('b'), values: kept }, col('b')]], else: lit(BREAKDOWN_OTHER) } : col('b')
  const { rows } = await ctx.run(funnelStepsPlan(persons, names.length, value))
  const byValue = new Map(rows.map((r) => [String(r.value), r]))
  const order = top.length > limit ? [...kept, BREAKDOWN_OTHER] : kept
  return order.map((v) => shapeSteps(byValue.get(v), names, { breakdownValue: v, multiple: q.breakdown!.multiple, unordered: q.order === 'unordered' }))
}

/**
 * Conversion trends per interval of entry; with a breakdown, one series per value for the values
 * most entered (up to the limit; PostHog folds none into "other" here), in value order.
 */
async function conversionTrends(ctx: QueryContext, q: FunnelsQuery, spec: FunnelSpec) {
  const persons = funnelPersonsPlan({ ...spec, entries: { entryBucket: timestampBucket(spec.range), keys: rangeKeys(spec.range) } })
  if (!q.breakdown) return shapeConversionTrends((await ctx.run(conversionTrendsPlan(persons, q.fromStep, q.toStep))).rows, spec.range)
  const values = (await ctx.run(funnelBreakdownValuesPlan(persons, q.breakdown.limit))).rows.map((r) => String(r.value)).sort()
  const { rows } = await ctx.run(conversionTrendsPlan(persons, q.fromStep, q.toStep, { value: col('b'), values }))
  return shapeConversionTrends(rows, spec.range, { values, multiple: q.breakdown.multiple })
}

/** Time to convert between `funnelFromStep` and `funnelToStep`: a histogram of persons by seconds taken. */
async function timeToConvert(ctx: QueryContext, q: FunnelsQuery, spec: FunnelSpec) {
  const persons: Plan = funnelPersonsPlan(spec)
  const stats = (await ctx.run(conversionTimeStatsPlan(persons, q.fromStep, q.toStep))).rows[0]
  const count = Number(stats?.persons ?? 0)
  if (count === 0) return { bins: [], average_conversion_time: null }
  const minMs = Math.floor(Number(stats!.min_ms) / 1000) * 1000
  const widthMs = binWidthMs(minMs, Number(stats!.max_ms), q.binCount ?? defaultBinCount(count))
  const { rows } = await ctx.run(conversionTimeBinsPlan(persons, q.fromStep, q.toStep, minMs, widthMs))
  return shapeTimeToConvert(rows, minMs, widthMs, Number(stats!.avg_ms))
}
