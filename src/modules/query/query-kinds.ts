import type { QueryRunner } from './query-context.ts'
import { runTrendsQuery } from './run-trends-query.ts'
import { runFunnelsQuery } from './run-funnels-query.ts'
import { runRetentionQuery } from './run-retention-query.ts'
import { runEventsQuery } from './run-events-query.ts'
import { runHogQLQuery } from './run-hogql-query.ts'
import { runLifecycleQuery, runStickinessQuery } from './run-persons-queries.ts'
import { runActorsQuery } from './run-actors-query.ts'
import { lookupTable } from '../../shared/lookup-table.ts'

/**
 * The query kinds `POST /api/projects/:id/query/` answers, by PostHog's `kind`: one line per kind.
 * A kind not listed is a 400 naming `kind` (a table with no prototype: `constructor` is not a kind).
 */
export const QUERY_KINDS = lookupTable<QueryRunner>({
  TrendsQuery: runTrendsQuery,
  FunnelsQuery: runFunnelsQuery,
  RetentionQuery: runRetentionQuery,
  EventsQuery: runEventsQuery,
  StickinessQuery: runStickinessQuery,
  LifecycleQuery: runLifecycleQuery,
  HogQLQuery: runHogQLQuery,
  ActorsQuery: runActorsQuery,
})
