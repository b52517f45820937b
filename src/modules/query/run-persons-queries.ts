import { lifecyclePlan, readPersonsQuery, shapeLifecycle, shapeStickiness, stickinessPlan } from '../../domain/query/stickiness-lifecycle.ts'
import { actionJson, seriesLabel } from '../../domain/query/trends-results.ts'
import { previousPeriod, type ResolvedRange } from '../../domain/query/date-range.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'
import { loadCohorts, queryFilters, resolveRange, resolvedRangeJson, seriesMatch } from './query-helpers.ts'

/** `StickinessQuery`: per series, persons by how many intervals of the range they were active in. */
export async function runStickinessQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const q = readPersonsQuery(node, 'StickinessQuery')
  const filters = queryFilters(ctx, q)
  const cohorts = await loadCohorts(ctx, [filters.properties, filters.testAccounts, ...q.series.map((s) => s.properties)])
  // PostHog's StickinessQueryRunner ends an hourly range with a date-only date_to at that day's 00:00.
  const range = await resolveRange(ctx, q.dateRange, q.interval, { hourlyDateOnlyEndsAtMidnight: true })
  // With compare, each series is followed by its previous period (PostHog's setup_series order).
  const periods: Array<[ResolvedRange, 'current' | 'previous' | null]> = q.compare ? [[range, 'current'], [previousPeriod(range), 'previous']] : [[range, null]]
  const results = []
  for (const [i, series] of q.series.entries()) {
    const { match, actionName } = await seriesMatch(ctx, series, `query.series.${i}`, filters, cohorts)
    const label = seriesLabel(series, actionName)
    for (const [period, compareLabel] of periods) {
      const { rows } = await ctx.run(stickinessPlan(match, period))
      const compare = compareLabel ? { compare: true, compare_label: compareLabel } : {}
      results.push({ action: actionJson(series, i, label), label, ...shapeStickiness(rows, period), ...compare, filter: {} })
    }
  }
  return { results, resolved_date_range: resolvedRangeJson(range) }
}

/** `LifecycleQuery`: new, returning, resurrecting and dormant persons per interval of one series. */
export async function runLifecycleQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const q = readPersonsQuery(node, 'LifecycleQuery')
  const series = q.series[0]!
  const filters = queryFilters(ctx, q)
  const cohorts = await loadCohorts(ctx, [filters.properties, filters.testAccounts, series.properties])
  const range = await resolveRange(ctx, q.dateRange, q.interval)
  const { match, actionName } = await seriesMatch(ctx, series, 'query.series.0', filters, cohorts)
  const label = seriesLabel(series, actionName)
  const { rows } = await ctx.run(lifecyclePlan(match, range))
  const results = shapeLifecycle(rows, range).map((s) => ({ action: actionJson(series, 0, label), label: `${label} - ${s.status}`, ...s, filter: {} }))
  return { results, resolved_date_range: resolvedRangeJson(range) }
}
