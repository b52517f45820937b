import { rangeKeys } from '../../domain/query/bucket-keys.ts'
import { defaultRetentionFrom, readRetentionQuery, retentionPlan, shapeRetention } from '../../domain/query/retention.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'
import { loadCohorts, resolveRange, resolvedRangeJson, seriesMatch } from './query-helpers.ts'

/** `RetentionQuery`: the cohort grid, one row per period of the range, counted per person in DuckDB. */
export async function runRetentionQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const q = readRetentionQuery(node)
  const cohorts = await loadCohorts(ctx, [q.properties, q.target.properties, q.returning.properties])
  const range = await resolveRange(ctx, q.dateRange, q.interval, defaultRetentionFrom(q, ctx.now, ctx.timeZone))
  const target = await seriesMatch(ctx, q.target, 'query.retentionFilter.targetEntity', q.properties, cohorts)
  const returning = await seriesMatch(ctx, q.returning, 'query.retentionFilter.returningEntity', q.properties, cohorts)
  const { rows } = await ctx.run(retentionPlan(q, range, rangeKeys(range), target.match, returning.match))
  return { results: shapeRetention(rows[0], q, range), resolved_date_range: resolvedRangeJson(range) }
}
