import { previousPeriod } from '../../domain/query/date-range.ts'
import { filtersToExpr } from '../../domain/query/filter-expr.ts'
import { bin, col, lit, type Expr } from '../../domain/query/query-plan.ts'
import { WEB_BREAKDOWNS } from '../../domain/web/web-breakdowns.ts'
import { entryBouncePlan, overviewPlan, statsPlan, type Periods } from '../../domain/web/web-plans.ts'
import { sessionFilterExpr, splitSessionFilters } from '../../domain/web/session-filters.ts'
import { readWebQueryBase, readWebStatsTableQuery, type ConversionGoal, type WebQueryBase } from '../../domain/web/web-query.ts'
import { conversionOverviewResults, conversionRatePair, num, overviewResults, rangeStrings, shapeStatsTable, statsMeasures, type Pair, type StatsRow } from '../../domain/web/web-results.ts'
import { validationError } from '../../shared/errors.ts'
import { readNode } from '../../domain/query/query-fields.ts'
import { runTrendsQuery } from './run-trends-query.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'
import { loadCohorts, resolveRange } from './query-helpers.ts'

/** The query's periods in the project's zone (whole days, PostHog's default `-7d`) and its filter. */
async function readCommon(ctx: QueryContext, q: WebQueryBase, opts: { withoutPathname?: boolean } = {}) {
  const range = await resolveRange(ctx, q.dateRange, 'day')
  const periods: Periods = { current: range, previous: q.compare ? previousPeriod(range) : null }
  // "Filter out internal and test users": the project's test-account filters join the query's.
  const properties = q.filterTestAccounts ? [...(q.properties as unknown[]), ...ctx.project.testAccountFilters] : q.properties
  // Session properties filter the sessions; the others (event, person, cohort) the events counted.
  const { others, session: sessionFilters } = splitSessionFilters(properties)
  const session = sessionFilterExpr(sessionFilters, 'query.properties')
  const cohorts = await loadCohorts(ctx, [others])
  const filter = filtersToExpr(others, 'query.properties', cohorts)
  const list = Array.isArray(others) ? others : []
  const isPathname = (p: unknown) => typeof p === 'object' && p !== null && (p as { key?: unknown }).key === '$pathname' && ((p as { type?: unknown }).type ?? 'event') === 'event'
  const withoutPathname: Expr | undefined = opts.withoutPathname ? filtersToExpr(list.filter((p) => !isPathname(p)), 'query.properties', cohorts) : undefined
  return { range, periods, filter, withoutPathname, session }
}

/** The events a conversion goal matches: the action's (a 400 when the project has none such), or the custom event's. */
async function goalExpr(ctx: QueryContext, goal: ConversionGoal): Promise<Expr> {
  if ('actionId' in goal) return { op: 'action', steps: (await ctx.action(goal.actionId, 'query.conversionGoal.actionId')).steps }
  return bin('=', col('event'), lit(goal.customEventName))
}

/**
 * `WebOverviewQuery`: visitors, views, sessions, session duration and bounce rate, with the previous
 * period on compare; with a `conversionGoal`, visitors, total and unique conversions and the conversion rate.
 */
export async function runWebOverviewQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const q = readWebQueryBase(node)
  const { range, periods, filter, session } = await readCommon(ctx, q)
  const goal = q.conversionGoal ? await goalExpr(ctx, q.conversionGoal) : undefined
  const { rows } = await ctx.run(overviewPlan(periods, filter, session, goal))
  return {
    results: goal ? conversionOverviewResults(rows[0] ?? {}) : overviewResults(rows[0] ?? {}),
    samplingRate: { numerator: 1, denominator: null },
    ...rangeStrings(range),
    usedPreAggregatedTables: false,
  }
}

/**
 * `WebStatsTableQuery`: visitors, views and bounce rate per value of one breakdown, ordered and paged
 * as PostHog's table; with a `conversionGoal`, visitors, total and unique conversions and the conversion rate.
 */
export async function runWebStatsTableQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const q = readWebStatsTableQuery(node)
  const def = WEB_BREAKDOWNS.get(q.breakdownBy)
  if (!def) throw validationError('query.breakdownBy', `The ${q.breakdownBy} breakdown is not supported yet.`, 'invalid_input')
  const goal = q.conversionGoal ? await goalExpr(ctx, q.conversionGoal) : undefined
  // With a goal PostHog's table has no bounce rate (stats_table.py's `to_main_query`).
  const withBounce = q.includeBounceRate && !goal
  // Pages take their bounce rate from the sessions that entered on them (a second statement, joined here).
  const pageBounce = q.breakdownBy === 'Page' && withBounce
  const { periods, filter, withoutPathname, session } = await readCommon(ctx, q, { withoutPathname: pageBounce })
  const [{ rows }, bounce] = await Promise.all([
    ctx.run(statsPlan(periods, def, filter, { bounce: withBounce && !pageBounce, session, goal })),
    pageBounce ? ctx.run(entryBouncePlan(periods, withoutPathname, session)) : Promise.resolve(null),
  ])
  const bounceOf = new Map((bounce?.rows ?? []).map((r) => [String(r.bv0), [num(r.bounce_rate), num(r.previous_bounce_rate)] as Pair]))
  const compare = periods.previous !== null
  // Counts of a period: 0 when it has no rows, null without compare.
  const counts = (r: Record<string, unknown>, name: string): [number, number | null] => [num(r[name]) ?? 0, compare ? (num(r[`previous_${name}`]) ?? 0) : null]
  const stats: StatsRow[] = rows.map((r) => {
    const value = def.language ? r.language : def.parts.length === 1 ? r.bv0 : def.parts.map((_, i) => r[`bv${i}`] ?? null)
    const row: StatsRow = { value: value ?? null, visitors: counts(r, 'visitors') }
    if (goal) {
      row.totalConversions = counts(r, 'conversions')
      row.uniqueConversions = counts(r, 'unique_conversions')
      row.conversionRate = conversionRatePair(row.uniqueConversions, row.visitors)
    } else row.views = counts(r, 'views')
    if (pageBounce) row.bounceRate = bounceOf.get(String(value)) ?? [null, null]
    else if (withBounce) row.bounceRate = [num(r.bounce_rate), num(r.previous_bounce_rate)]
    if (def.language) row.aggregationValue = String(r.aggregation_value ?? '')
    return row
  })
  return { ...shapeStatsTable(stats, q, statsMeasures({ bounce: withBounce, goal: goal !== undefined })), usedPreAggregatedTables: false }
}

/**
 * `WebVitalsQuery`: PostHog runs its `source` (a TrendsQuery of `$web_vitals` events, one series per
 * metric and percentile: `math: 'p75'`, `math_property: '$web_vitals_LCP_value'`) as a trends query,
 * with the web page's filters (`properties`, `filterTestAccounts`) added to the source's.
 */
export async function runWebVitalsQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const source = readNode(node.source, 'query.source')
  if (source.kind !== 'TrendsQuery') throw validationError('query.source.kind', 'A WebVitalsQuery\'s source is a TrendsQuery.', 'invalid_choice')
  const base = readWebQueryBase(node)
  const testAccounts = base.filterTestAccounts || source.filterTestAccounts === true ? ctx.project.testAccountFilters : []
  const extra = [...(base.properties as unknown[]), ...testAccounts]
  const own = source.properties
  const properties = own === undefined || own === null ? extra : Array.isArray(own) ? [...own, ...extra] : extra.length ? { type: 'AND', values: [own, { type: 'AND', values: extra }] } : own
  return runTrendsQuery(ctx, { ...source, properties })
}
