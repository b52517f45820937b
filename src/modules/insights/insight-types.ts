import type { User } from '../projects/project-types.ts'

/** Where an insight sits: a live tile on a live dashboard. */
export interface InsightPlacement {
  tileId: number
  dashboardId: number
}

/**
 * A saved insight, kept minimal until the query engine arrives: its name, description and the
 * query/filters JSON that will drive it. Dashboards show insights through tiles.
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
}

/** The writable part of an insight; on update only the fields present change. */
export interface InsightInput {
  name?: string | null
  description?: string
  query?: Record<string, unknown> | null
  filters?: Record<string, unknown>
  deleted?: boolean
}
