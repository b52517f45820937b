import type { ActorSet } from '../../domain/query/actors-plan.ts'
import type { Node } from '../../domain/query/query-fields.ts'
import { lifecycleActors, retentionActors, stickinessActors, trendsActors } from './actor-sets.ts'
import type { QueryContext, QueryNode, QueryResult } from './query-context.ts'
import { runActorsQuery } from './run-actors-query.ts'
import { runEventsQuery } from './run-events-query.ts'
import { runFunnelsQuery } from './run-funnels-query.ts'
import { runHogQLQuery } from './run-hogql-query.ts'
import { runLifecycleQuery, runStickinessQuery } from './run-persons-queries.ts'
import { runRetentionQuery } from './run-retention-query.ts'
import { runTrendsQuery } from './run-trends-query.ts'
import { runWebOverviewQuery, runWebStatsTableQuery, runWebVitalsQuery } from './run-web-queries.ts'
import { pathsActors, runPathsQuery } from './run-paths-query.ts'

/**
 * One query kind of `POST /api/projects/:id/query/`, by PostHog's `kind`: everything Tally knows
 * about it in one record. `R` is the kind's result (its own fields; the service adds the envelope).
 */
export interface QueryKind<R extends QueryResult = QueryResult> {
  kind: string
  run(ctx: QueryContext, node: QueryNode): Promise<R>
  /**
   * The actors behind one point of an insight of this kind (an `InsightActorsQuery` whose source
   * is this kind); absent when the kind has none this way (funnels go through `FunnelsActorsQuery`).
   */
  actors?(ctx: QueryContext, actorsNode: Node, source: Node, attr: string): Promise<ActorSet>
  /** Dashboard filters (date range, properties) apply to a tile of this kind (PostHog's `apply_dashboard_filters`). */
  dashboardFilters: boolean
}

const kinds: QueryKind[] = [
  { kind: 'TrendsQuery', run: runTrendsQuery, actors: trendsActors, dashboardFilters: true },
  { kind: 'FunnelsQuery', run: runFunnelsQuery, dashboardFilters: true },
  { kind: 'RetentionQuery', run: runRetentionQuery, actors: retentionActors, dashboardFilters: true },
  { kind: 'StickinessQuery', run: runStickinessQuery, actors: stickinessActors, dashboardFilters: true },
  { kind: 'LifecycleQuery', run: runLifecycleQuery, actors: lifecycleActors, dashboardFilters: true },
  { kind: 'PathsQuery', run: runPathsQuery, actors: pathsActors, dashboardFilters: true },
  // SQL and tables of events are left as they are on dashboards.
  { kind: 'EventsQuery', run: runEventsQuery, dashboardFilters: false },
  { kind: 'HogQLQuery', run: runHogQLQuery, dashboardFilters: false },
  { kind: 'ActorsQuery', run: runActorsQuery, dashboardFilters: false },
  // Web analytics (docs/web-analytics.md): sessions from the events, PostHog's shapes.
  { kind: 'WebOverviewQuery', run: runWebOverviewQuery, dashboardFilters: true },
  { kind: 'WebStatsTableQuery', run: runWebStatsTableQuery, dashboardFilters: true },
  { kind: 'WebVitalsQuery', run: runWebVitalsQuery, dashboardFilters: true },
]

/**
 * Every query kind, registered once. A `Map`, so a kind named `constructor`, `__proto__` or
 * `toString` finds nothing (a plain object's prototype would answer to it).
 */
export const QUERY_KINDS: ReadonlyMap<string, QueryKind> = new Map(kinds.map((k) => [k.kind, k]))

/** The kind of this name, or undefined (any value: only own registered names resolve). */
export function queryKind(name: unknown): QueryKind | undefined {
  return typeof name === 'string' ? QUERY_KINDS.get(name) : undefined
}
