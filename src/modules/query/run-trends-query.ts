import { previousPeriod, type ResolvedRange } from '../../domain/query/date-range.ts'
import { parseFormula } from '../../domain/query/formula.ts'
import { BREAKDOWN_OTHER, breakdownExpr, foldedBreakdown, isRolling, personBitsPlan, rankedBreakdownPlan, seriesPlan, topBreakdownsPlan, unpivotBits } from '../../domain/query/trends-plan.ts'
import { AGGREGATED_DISPLAYS, readTrendsQuery, type Series, type TrendsQuery } from '../../domain/query/trends-query.ts'
import { applyFormula, isOtherBreakdown, seriesLabel, shapeSeries, type SeriesRow, type TrendsResult } from '../../domain/query/trends-results.ts'
import type { Expr } from '../../domain/query/query-plan.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'
import { loadCohorts, queryFilters, resolveRange, resolvedRangeJson, seriesMatch, withGroupValues } from './query-helpers.ts'

/** `TrendsQuery`: one result per series (per breakdown value, per compared period), or the formula's. */
export async function runTrendsQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const q = readTrendsQuery(node)
  q.breakdown = await withGroupValues(ctx, q.breakdown, 'query.breakdownFilter.breakdown')
  const filters = queryFilters(ctx, q)
  const cohorts = await loadCohorts(ctx, [filters.properties, filters.testAccounts, ...q.series.map((s) => s.properties)])
  const range = await resolveRange(ctx, q.dateRange, q.interval)
  const aggregated = AGGREGATED_DISPLAYS.includes(q.display)
  const formula = q.formula ? parseFormula(q.formula, q.series.length, 'query.trendsFilter.formula') : null
  const periods: Array<[ResolvedRange, 'current' | 'previous' | undefined]> = q.compare
    ? [[range, 'current'], [previousPeriod(range), 'previous']]
    : [[range, undefined]]
  const perSeries: TrendsResult[][] = []
  for (const [i, series] of q.series.entries()) {
    const { match, actionName } = await seriesMatch(ctx, series, `query.series.${i}`, filters, cohorts)
    const label = seriesLabel(series, actionName)
    const results: TrendsResult[] = []
    for (const [period, compareLabel] of periods) {
      const { rows, order, carryForward } = await computeSeries(ctx, q, series, match, period, aggregated)
      results.push(...shapeSeries({ series, order: i, label, rows, range: period, breakdownOrder: order, aggregated, compareLabel, carryForward, multipleBreakdown: q.breakdown?.multiple, seriesCount: q.series.length }))
    }
    perSeries.push(results)
  }
  let results = formula ? applyFormula(perSeries, formula, q.formula!, aggregated) : perSeries.flat()
  // PostHog: `hasMore` when an "other" row exists; `breakdown_hide_other_aggregation` then drops it.
  const hasMore = q.breakdown !== null && results.some((r) => isOtherBreakdown(r.breakdown_value, BREAKDOWN_OTHER))
  if (hasMore && q.breakdown?.hideOther) results = results.filter((r) => !isOtherBreakdown(r.breakdown_value, BREAKDOWN_OTHER))
  return { results: sortCompared(results, q.compare), hasMore, resolved_date_range: resolvedRangeJson(range) }
}

/** With compare, PostHog lists every current-period result before the previous-period ones. */
function sortCompared(results: TrendsResult[], compare: boolean): TrendsResult[] {
  if (!compare) return results
  return [...results.filter((r) => r.compare_label === 'current'), ...results.filter((r) => r.compare_label !== 'current')]
}

/**
 * One series over one period. With a breakdown: the top values first (by their total, PostHog's
 * order), then the series with every other value folded into "other" when there are more.
 */
async function computeSeries(
  ctx: QueryContext,
  q: TrendsQuery,
  series: Series,
  match: Expr | undefined,
  range: ResolvedRange,
  aggregated: boolean,
): Promise<{ rows: SeriesRow[]; order: string[] | null; carryForward: boolean }> {
  const input = { series, match, range, aggregated }
  // Unique persons per bucket from one bit word per person when the span allows (exact values per
  // bucket); otherwise the general plan (rolling counts then come as running totals to carry forward).
  const rowsOf = async (breakdown: Expr | null): Promise<{ rows: SeriesRow[]; carryForward: boolean }> => {
    const bits = personBitsPlan({ ...input, breakdown })
    if (bits) return { rows: unpivotBits((await ctx.run(bits.plan)).rows, bits.keys), carryForward: false }
    const rows = (await ctx.run(seriesPlan({ ...input, breakdown }))).rows as unknown as SeriesRow[]
    return { rows, carryForward: isRolling(series, range.interval) && !aggregated }
  }
  if (!q.breakdown) return { ...(await rowsOf(null)), order: null }
  const ranked = rankedBreakdownPlan(input, q.breakdown)
  if (ranked) {
    const rows = (await ctx.run(ranked)).rows as unknown as Array<SeriesRow & { rank: number }>
    const rankOf = new Map(rows.map((r) => [r.breakdown_value, Number(r.rank)]))
    return { rows, order: [...rankOf.keys()].sort((a, b) => rankOf.get(a)! - rankOf.get(b)!), carryForward: false }
  }
  const plain = breakdownExpr(q.breakdown)
  const top = (await ctx.run(topBreakdownsPlan(seriesPlan({ ...input, breakdown: plain }), q.breakdown.limit))).rows.map((r) => String(r.breakdown_value))
  if (top.length <= q.breakdown.limit) {
    if (top.length === 0) return { rows: [], order: [], carryForward: false }
    return { ...(await rowsOf(plain)), order: top }
  }
  const kept = top.slice(0, q.breakdown.limit)
  return { ...(await rowsOf(foldedBreakdown(q.breakdown, kept))), order: [...kept, BREAKDOWN_OTHER] }
}
