import { retentionCohortsPlan, retentionPlan, shapeRetention } from '../../domain/query/retention-plan.ts'
import { rollingRetentionCohortsPlan, rollingRetentionPlan } from '../../domain/query/retention-window-plan.ts'
import { readRetentionQuery, retentionRange } from '../../domain/query/retention.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'
import { loadCohorts, queryFilters, resolveRange, seriesMatch } from './query-helpers.ts'

/** `RetentionQuery`: the cohort grid, one row per period of the range, counted per person in DuckDB. */
export async function runRetentionQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const { q, range, grid } = await readRetention(ctx, node, 'query')
  const { rows } = await ctx.run(grid)
  return { results: shapeRetention(rows, q, range) }
}

/**
 * A retention query read and resolved (`attr` its path, for errors): its range, the plan of its
 * grid and the plan of the rows the grid counts (`{actor, c, back}`), which the actors query reads.
 */
export async function readRetention(ctx: QueryContext, node: QueryNode, attr: string) {
  const q = readRetentionQuery(node, attr)
  const filters = queryFilters(ctx, q)
  const cohorts = await loadCohorts(ctx, [filters.properties, filters.testAccounts, q.target.properties, q.returning.properties])
  // Without date_from the start is counted back from the end; resolve the end alone first.
  const base = await resolveRange(ctx, q.dateRange, q.interval, { defaultFrom: q.dateRange?.date_to ?? '-0d' })
  const range = retentionRange(base, q, attr)
  const targetAttr = `${attr}.retentionFilter.targetEntity`
  const target = await seriesMatch(ctx, q.target, targetAttr, filters, cohorts)
  const returning = await seriesMatch(ctx, q.returning, `${attr}.retentionFilter.returningEntity`, filters, cohorts)
  const targetAnyProperties = q.mode === 'first_ever' ? (await seriesMatch(ctx, { ...q.target, properties: [] }, targetAttr, filters, cohorts)).match : undefined
  const match = { target: target.match, returning: returning.match, targetAnyProperties }
  const rolling = q.windows === 'rolling'
  return {
    q,
    range,
    grid: rolling ? rollingRetentionPlan(q, range, match) : retentionPlan(q, range, match),
    cohorts: rolling ? rollingRetentionCohortsPlan(q, range, match) : retentionCohortsPlan(q, range, match),
  }
}
