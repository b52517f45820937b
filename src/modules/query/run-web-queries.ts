import { previousPeriod } from '../../domain/query/date-range.ts'
import { filtersToExpr } from '../../domain/query/filter-expr.ts'
import type { Expr } from '../../domain/query/query-plan.ts'
import { WEB_BREAKDOWNS } from '../../domain/web/web-breakdowns.ts'
import { entryBouncePlan, overviewPlan, statsPlan, type Periods } from '../../domain/web/web-plans.ts'
import { readWebQueryBase, readWebStatsTableQuery, type WebQueryBase } from '../../domain/web/web-query.ts'
import { num, overviewResults, rangeStrings, shapeStatsTable, type StatsRow } from '../../domain/web/web-results.ts'
import { validationError } from '../../shared/errors.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'
import { loadCohorts, resolveRange } from './query-helpers.ts'

/** The query's periods in the project's zone (whole days, PostHog's default `-7d`) and its filter. */
async function readCommon(ctx: QueryContext, q: WebQueryBase, opts: { withoutPathname?: boolean } = {}) {
  const range = await resolveRange(ctx, q.dateRange, 'day')
  const periods: Periods = { current: range, previous: q.compare ? previousPeriod(range) : null }
  const cohorts = await loadCohorts(ctx, [q.properties])
  const filter = filtersToExpr(q.properties, 'query.properties', cohorts)
  const list = Array.isArray(q.properties) ? q.properties : []
  const isPathname = (p: unknown) => typeof p === 'object' && p !== null && (p as { key?: unknown }).key === '$pathname' && ((p as { type?: unknown }).type ?? 'event') === 'event'
  const withoutPathname: Expr | undefined = opts.withoutPathname ? filtersToExpr(list.filter((p) => !isPathname(p)), 'query.properties', cohorts) : undefined
  return { range, periods, filter, withoutPathname }
}

/** `WebOverviewQuery`: visitors, views, sessions, session duration and bounce rate, with the previous period on compare. */
export async function runWebOverviewQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const q = readWebQueryBase(node)
  const { range, periods, filter } = await readCommon(ctx, q)
  const { rows } = await ctx.run(overviewPlan(periods, filter))
  return {
    results: overviewResults(rows[0] ?? {}),
    samplingRate: { numerator: 1, denominator: null },
    ...rangeStrings(range),
    usedPreAggregatedTables: false,
  }
}

/** `WebStatsTableQuery`: visitors, views and bounce rate per value of one breakdown, ordered and paged as PostHog's table. */
export async function runWebStatsTableQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const q = readWebStatsTableQuery(node)
  const def = WEB_BREAKDOWNS.get(q.breakdownBy)
  if (!def) throw validationError('query.breakdownBy', `The ${q.breakdownBy} breakdown is not supported yet.`, 'invalid_input')
  // Pages take their bounce rate from the sessions that entered on them (a second statement, joined here).
  const pageBounce = q.breakdownBy === 'Page' && q.includeBounceRate
  const { periods, filter, withoutPathname } = await readCommon(ctx, q, { withoutPathname: pageBounce })
  const [{ rows }, bounce] = await Promise.all([
    ctx.run(statsPlan(periods, def, filter, { bounce: q.includeBounceRate && !pageBounce })),
    pageBounce ? ctx.run(entryBouncePlan(periods, withoutPathname)) : Promise.resolve(null),
  ])
  const bounceOf = new Map((bounce?.rows ?? []).map((r) => [String(r.bv0), [num(r.bounce_rate), num(r.previous_bounce_rate)] as [number | null, number | null]]))
  const compare = periods.previous !== null
  const stats: StatsRow[] = rows.map((r) => {
    const value = def.language ? r.language : def.parts.length === 1 ? r.bv0 : def.parts.map((_, i) => r[`bv${i}`] ?? null)
    const row: StatsRow = {
      value: value ?? null,
      visitors: [num(r.visitors) ?? 0, compare ? (num(r.previous_visitors) ?? 0) : null],
      views: [num(r.views) ?? 0, compare ? (num(r.previous_views) ?? 0) : null],
    }
    if (pageBounce) row.bounceRate = bounceOf.get(String(value)) ?? [null, null]
    else if (q.includeBounceRate) row.bounceRate = [num(r.bounce_rate), num(r.previous_bounce_rate)]
    if (def.language) row.aggregationValue = String(r.aggregation_value ?? '')
    return row
  })
  return { ...shapeStatsTable(stats, q, q.includeBounceRate), usedPreAggregatedTables: false }
}
