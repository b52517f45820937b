import { toUserSummary } from '../projects/project-types.ts'
import type { Insight } from './insight-types.ts'

/** An insight as PostHog's InsightSerializer shows it (no results yet: the query engine comes later). */
export function toInsightJson(i: Insight) {
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
    result: null,
    last_refresh: null,
    is_cached: false,
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
