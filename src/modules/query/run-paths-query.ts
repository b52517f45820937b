import { pathActorsPlan, pathEdgesPlan, type PathsSpec } from '../../domain/query/paths/paths-plan.ts'
import { readCleaningRule, readPathsQuery } from '../../domain/query/paths/paths-query.ts'
import { shapePaths } from '../../domain/query/paths/paths-results.ts'
import type { ActorSet } from '../../domain/query/actors-plan.ts'
import { filtersToExpr } from '../../domain/query/filter-expr.ts'
import { and } from '../../domain/query/query-plan.ts'
import type { Node } from '../../domain/query/query-fields.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'
import { loadCohorts, queryFilters, resolveRange, testAccountsExpr } from './query-helpers.ts'

/** `PathsQuery`: the edges between the steps persons took, as PostHog's paths insight answers them. */
export async function runPathsQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const spec = await readPaths(ctx, node, 'query')
  const { rows } = await ctx.run(pathEdgesPlan(spec))
  return { results: shapePaths(rows) }
}

/** The persons behind a path edge or drop-off (`pathStartKey`, `pathEndKey`, `pathDropoffKey` of the source's filter). */
export async function pathsActors(ctx: QueryContext, _actorsNode: Node, source: Node, attr: string): Promise<ActorSet> {
  const spec = await readPaths(ctx, source, `${attr}.source`)
  return { plan: pathActorsPlan(spec), groupTypeIndex: null, stats: ['event_count'] }
}

/** A `PathsQuery` node read and resolved against the project: range, cleaning rules, filters. */
export async function readPaths(ctx: QueryContext, node: QueryNode, attr: string): Promise<PathsSpec> {
  const q = readPathsQuery(node, attr)
  const range = await resolveRange(ctx, q.dateRange, 'day')
  const shared = queryFilters(ctx, q)
  const cohorts = await loadCohorts(ctx, [shared.properties, shared.testAccounts])
  const filters = and(filtersToExpr(q.properties, `${attr}.properties`, cohorts), testAccountsExpr(shared, cohorts))
  const projectRules = q.pathReplacements ? (ctx.project.pathCleaningFilters ?? []).map((r, i) => readCleaningRule(r, `path_cleaning_filters.${i}`)) : []
  return { q, range, cleaning: [...projectRules, ...q.localPathCleaningFilters], filters }
}
