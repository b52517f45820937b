import { toUserSummary } from '../projects/project-types.ts'
import type { Insight } from './insight-types.ts'
import type { InsightResult } from './insight-results.ts'

/** The result fields of an insight: the query response's `results` (and columns for tables), when and whether cached. */
function resultFields(r: InsightResult | undefined) {
  const response = r?.response ?? null
  return {
    result: response ? (response.results ?? null) : null,
    ...(response && 'columns' in response ? { columns: response.columns, types: response.types, hasMore: response.hasMore } : {}),
    last_refresh: r?.lastRefresh?.toISOString() ?? null,
    is_cached: r?.isCached ?? false,
    timezone: response ? (response.timezone ?? null) : null,
    query_status: null,
  }
}

/** An insight as PostHog's InsightSerializer shows it, with its result as the read's refresh mode gave it. */
export function toInsightJson(i: Insight, r?: InsightResult) {
  return {
    id: i.id,
    short_id: i.shortId,
    name: i.name,
    derived_name: null,
    description: i.description,
    query: i.query,
    filters: i.filters,
    dashboards: i.placements.map((p) => p.dashboardId),
    dashboard_tiles: i.placements.map((p) => ({ id: p.tileId, dashboard_id: p.dashboardId, deleted: false })),
    ...resultFields(r),
    created_at: i.createdAt.toISOString(),
    created_by: i.createdBy ? toUserSummary(i.createdBy) : null,
    last_modified_at: i.updatedAt.toISOString(),
    deleted: i.deleted,
    saved: true,
    favorited: false,
    tags: [],
    order: null,
    is_sample: false,
    team_id: i.projectId,
  }
}
