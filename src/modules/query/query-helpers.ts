import { resolveDateRange, type DateRangeInput, type Interval, type ResolvedRange } from '../../domain/query/date-range.ts'
import type { ActionStepDefinition } from '../../domain/actions/match-action.ts'
import { behavioralActionIds, type BehavioralInputs } from '../../domain/query/behavioral-expr.ts'
import { cohortIdsOf, filtersToExpr, type QueryCohort } from '../../domain/query/filter-expr.ts'
import { and, col, eq, fromEvents, lit, type Expr } from '../../domain/query/query-plan.ts'
import type { Breakdown, Series } from '../../domain/query/trends-query.ts'
import { formatWall, toWallTime } from '../../domain/query/zoned-time.ts'
import type { QueryContext } from './query-context.ts'

/**
 * The cohorts the filters name, loaded once per query (a missing one is a 400 naming its filter).
 * Dynamic cohorts get what behavioural criteria read: the query's now and the steps of the actions they name.
 */
export async function loadCohorts(ctx: QueryContext, filterLists: unknown[]): Promise<Map<number, QueryCohort>> {
  const cohorts = new Map<number, QueryCohort>()
  const pending = filterLists.flatMap(cohortIdsOf)
  // Dynamic cohorts may name other cohorts: load those too (bounded).
  for (let i = 0; i < pending.length && cohorts.size < 100; i++) {
    const id = pending[i]!
    if (cohorts.has(id)) continue
    const cohort = await ctx.cohort(id, 'query.properties')
    cohorts.set(id, cohort)
    if (cohort.properties) pending.push(...cohortIdsOf(cohort.properties))
  }
  const dynamic = [...cohorts.values()].filter((c) => !c.isStatic && c.properties)
  const actions = new Map<number, readonly ActionStepDefinition[]>()
  for (const id of dynamic.flatMap((c) => behavioralActionIds(c.properties))) {
    if (!actions.has(id)) actions.set(id, (await ctx.action(id, 'query.properties')).steps)
  }
  const inputs: BehavioralInputs = { now: ctx.now, timeZone: ctx.timeZone, actions }
  for (const c of dynamic) cohorts.set(c.id, { ...c, behavioral: inputs })
  return cohorts
}

/** A group breakdown with its groups' values loaded (events carry group keys only); other breakdowns as they are. */
export async function withGroupValues(ctx: QueryContext, b: Breakdown | null, attr: string): Promise<Breakdown | null> {
  if (!b || !b.parts.some((p) => p.type === 'group')) return b
  const parts = []
  for (const p of b.parts) parts.push(p.type === 'group' ? { ...p, groupValues: await ctx.groupValues(p.groupTypeIndex!, p.key, attr) } : p)
  return { ...b, parts }
}

/** The query's range in the project's zone; `date_from: 'all'` starts at the project's first event. */
export async function resolveRange(
  ctx: QueryContext,
  input: DateRangeInput | undefined,
  interval: Interval,
  opts: { defaultFrom?: string; hourlyDateOnlyEndsAtMidnight?: boolean } = {},
): Promise<ResolvedRange> {
  let earliest: Date | null = null
  if (input?.date_from === 'all') {
    const { rows } = await ctx.run({ source: fromEvents(), select: [{ alias: 'first', expr: { op: 'aggregate', fn: 'min', arg: col('timestamp') } }] })
    earliest = (rows[0]?.first as Date | null) ?? null
  }
  return resolveDateRange(input, interval, { now: ctx.now, timeZone: ctx.timeZone, earliest, ...opts }, 'query.dateRange')
}

/** PostHog's `resolved_date_range`: the range's ends as local ISO times of the project's zone. */
export function resolvedRangeJson(range: ResolvedRange) {
  const local = (d: Date) => formatWall(toWallTime(d, range.timeZone), true).replace(' ', 'T')
  return { date_from: local(range.from), date_to: local(new Date(range.to.getTime() - 1000)) }
}

/**
 * The filters a query applies to every event it reads, as PostHog's `Properties.to_exprs`: its
 * `properties` and, with `filterTestAccounts`, the project's `test_account_filters` ("filter out
 * internal and test users"). Both lists may name cohorts: pass both to `loadCohorts`.
 */
export interface QueryFilters {
  properties: unknown
  testAccounts: readonly unknown[]
}

export function queryFilters(ctx: QueryContext, q: { properties: unknown; filterTestAccounts: boolean }): QueryFilters {
  return { properties: q.properties, testAccounts: q.filterTestAccounts ? ctx.project.testAccountFilters : [] }
}

/** The test-account filters alone as one condition (undefined when off or empty). */
export function testAccountsExpr(filters: QueryFilters, cohorts: ReadonlyMap<number, QueryCohort>): Expr | undefined {
  return filtersToExpr(filters.testAccounts, 'test_account_filters', cohorts)
}

/**
 * Which events a series counts: its event (or action), its own property filters and the query's
 * (`filters`: its properties and test-account filters). An action series also gives the action's name for labels.
 */
export async function seriesMatch(
  ctx: QueryContext,
  series: Series,
  attr: string,
  filters: QueryFilters | undefined,
  cohorts: ReadonlyMap<number, QueryCohort>,
): Promise<{ match: Expr | undefined; actionName: string | null }> {
  let what: Expr | undefined
  let actionName: string | null = null
  if (series.kind === 'ActionsNode') {
    const action = await ctx.action(series.actionId!, `${attr}.id`)
    actionName = action.name
    what = { op: 'action', steps: action.steps }
  } else if (series.event !== null) {
    what = eq(col('event'), lit(series.event))
  }
  const own = filtersToExpr(series.properties, `${attr}.properties`, cohorts)
  const shared = filters && and(filtersToExpr(filters.properties, 'query.properties', cohorts), testAccountsExpr(filters, cohorts))
  return { match: and(what, own, shared), actionName }
}
