import { toInsightJson } from '../insights/insight-json.ts'
import { toUserSummary } from '../projects/project-types.ts'
import type { DashboardView } from './dashboard-service.ts'
import type { Tile } from './dashboard-types.ts'
import type { InsightResult } from '../insights/insight-results.ts'

/** Each tile insight's result by insight id (what the read's refresh mode gave). */
export type TileResults = ReadonlyMap<number, InsightResult>

/** A dashboard list item (PostHog's DashboardBasicSerializer): no tiles, no filters. */
export function toDashboardListJson({ dashboard: d, access }: DashboardView) {
  return {
    id: d.id,
    name: d.name,
    description: d.description,
    pinned: d.pinned,
    created_at: d.createdAt.toISOString(),
    created_by: d.createdBy ? toUserSummary(d.createdBy) : null,
    last_accessed_at: d.lastAccessedAt?.toISOString() ?? null,
    is_shared: false,
    deleted: d.deleted,
    creation_mode: d.creationMode,
    tags: d.tags,
    restriction_level: d.restrictionLevel,
    effective_restriction_level: access.effectiveRestrictionLevel,
    effective_privilege_level: access.effectivePrivilegeLevel,
    access_control_version: d.restrictionLevel > 21 ? 'v1' : 'v2',
    team_id: d.projectId,
  }
}

function toTileJson(t: Tile, order: number, results?: TileResults) {
  const result = t.insight ? results?.get(t.insight.id) : undefined
  return {
    id: t.id,
    insight: t.insight ? toInsightJson(t.insight, result) : null,
    text: t.text
      ? {
          id: t.text.id,
          body: t.text.body,
          created_by: t.text.createdBy ? toUserSummary(t.text.createdBy) : null,
          last_modified_at: t.text.lastModifiedAt.toISOString(),
          last_modified_by: null,
          team: t.text.projectId,
        }
      : null,
    layouts: t.layouts,
    color: t.color,
    deleted: t.deleted,
    filters_overrides: t.filtersOverrides,
    order,
    last_refresh: result?.lastRefresh?.toISOString() ?? null,
    is_cached: result?.isCached ?? false,
  }
}

/** A full dashboard record (PostHog's DashboardSerializer), with its tiles in display order. */
export function toDashboardJson(v: DashboardView, results?: TileResults) {
  const d = v.dashboard
  return {
    ...toDashboardListJson(v),
    filters: d.filters,
    variables: d.variables,
    breakdown_colors: [],
    data_color_theme_id: null,
    persisted_filters: Object.keys(d.filters).length ? d.filters : null,
    persisted_variables: Object.keys(d.variables).length ? d.variables : null,
    last_refresh: null,
    use_template: '',
    use_dashboard: null,
    delete_insights: false,
    tiles: (v.tiles ?? []).map((t, i) => toTileJson(t, i, results)),
  }
}
