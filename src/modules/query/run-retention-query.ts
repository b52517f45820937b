import { retentionPlan, shapeRetention } from '../../domain/query/retention-plan.ts'
import { rollingRetentionPlan } from '../../domain/query/retention-window-plan.ts'
import { readRetentionQuery, retentionRange } from '../../domain/query/retention.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'
import { loadCohorts, resolveRange, seriesMatch } from './query-helpers.ts'

const TARGET = 'query.retentionFilter.targetEntity'
const RETURNING = 'query.retentionFilter.returningEntity'

/** `RetentionQuery`: the cohort grid, one row per period of the range, counted per person in DuckDB. */
export async function runRetentionQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const q = readRetentionQuery(node)
  const cohorts = await loadCohorts(ctx, [q.properties, q.target.properties, q.returning.properties])
  // Without date_from the start is counted back from the end; resolve the end alone first.
  const base = await resolveRange(ctx, q.dateRange, q.interval, q.dateRange?.date_to ?? '-0d')
  const range = retentionRange(base, q)
  const target = await seriesMatch(ctx, q.target, TARGET, q.properties, cohorts)
  const returning = await seriesMatch(ctx, q.returning, RETURNING, q.properties, cohorts)
  const targetAnyProperties = q.mode === 'first_ever' ? (await seriesMatch(ctx, { ...q.target, properties: [] }, TARGET, q.properties, cohorts)).match : undefined
  const match = { target: target.match, returning: returning.match, targetAnyProperties }
  const { rows } = await ctx.run(q.windows === 'rolling' ? rollingRetentionPlan(q, range, match) : retentionPlan(q, range, match))
  return { results: shapeRetention(rows, q, range) }
}
