import type { User } from '../projects/project-types.ts'

/** Where an insight sits: a live tile on a live dashboard. */
export interface InsightPlacement {
  tileId: number
  dashboardId: number
}

/**
 * A saved insight: its name, description, the query (PostHog's `InsightVizNode`/`DataTableNode`)
 * and its last result. Dashboards show insights through tiles.
 */
export interface Insight {
  id: number
  shortId: string
  projectId: number
  name: string | null
  description: string
  query: Record<string, unknown> | null
  filters: Record<string, unknown>
  deleted: boolean
  createdBy: User | null
  createdAt: Date
  updatedAt: Date
  placements: InsightPlacement[]
  /** The last computed result of `query`, if any (dropped when the query changes). */
  cache: InsightCache | null
}

/** A computed query response kept with its insight. */
export interface InsightCache {
  /** Names the query it answers (project, zone, query): a different key is a miss. */
  key: string
  response: Record<string, unknown>
  computedAt: Date
}

/** The writable part of an insight; on update only the fields present change. */
export interface InsightInput {
  name?: string | null
  description?: string
  query?: Record<string, unknown> | null
  filters?: Record<string, unknown>
  deleted?: boolean
}
