import { queryKind } from '../query/query-kinds.ts'

/**
 * PostHog's dashboard filters applied to a tile's insight query (its `apply_dashboard_filters`):
 * the dashboard's `date_from`/`date_to` replace the query's date range, its `properties` are added
 * to the query's own (both must hold). Tile `filters_overrides` win over the dashboard's. SQL
 * queries (`HogQLQuery`) and tables of events are left as they are.
 */
export interface DashboardFilters {
  date_from?: unknown
  date_to?: unknown
  properties?: unknown
}


/** The filters that apply to a tile: the dashboard's, then the tile's overrides key by key. */
export function tileFilters(dashboard: Record<string, unknown> | null | undefined, overrides: Record<string, unknown> | null | undefined): DashboardFilters {
  return { ...(dashboard ?? {}), ...(overrides ?? {}) }
}

/** Whether the filters change anything (an empty range and no properties do not). */
export function hasDashboardFilters(f: DashboardFilters): boolean {
  return typeof f.date_from === 'string' && f.date_from !== '' || typeof f.date_to === 'string' && f.date_to !== '' || (Array.isArray(f.properties) && f.properties.length > 0)
}

/** The query with the filters applied (a copy; `query` is an insight's stored query or its wrapper). */
export function applyDashboardFilters(query: Record<string, unknown>, f: DashboardFilters): Record<string, unknown> {
  const wrapped = query.kind === 'InsightVizNode' && query.source && typeof query.source === 'object'
  const source = (wrapped ? query.source : query) as Record<string, unknown>
  if (!queryKind(source.kind)?.dashboardFilters) return query
  const next: Record<string, unknown> = { ...source }
  if (typeof f.date_from === 'string' && f.date_from !== '') {
    next.dateRange = { date_from: f.date_from, date_to: typeof f.date_to === 'string' && f.date_to !== '' ? f.date_to : null }
  } else if (typeof f.date_to === 'string' && f.date_to !== '') {
    next.dateRange = { ...((source.dateRange as object | undefined) ?? {}), date_to: f.date_to }
  }
  if (Array.isArray(f.properties) && f.properties.length > 0) {
    const own = source.properties
    next.properties = own === undefined || own === null || (Array.isArray(own) && own.length === 0)
      ? f.properties
      : { type: 'AND', values: [Array.isArray(own) ? { type: 'AND', values: own } : own, { type: 'AND', values: f.properties }] }
  }
  return wrapped ? { ...query, source: next } : next
}
