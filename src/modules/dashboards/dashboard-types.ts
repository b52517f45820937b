import type { Insight } from '../insights/insight-types.ts'
import type { User } from '../projects/project-types.ts'

/** PostHog's RestrictionLevel: 21 everyone in the project can edit, 37 only collaborators can. */
export const RESTRICTION_LEVELS = [21, 37] as const
export type RestrictionLevel = (typeof RESTRICTION_LEVELS)[number]

export type CreationMode = 'default' | 'template' | 'duplicate'

export interface Dashboard {
  id: number
  projectId: number
  name: string | null
  description: string
  pinned: boolean
  deleted: boolean
  creationMode: CreationMode
  filters: Record<string, unknown>
  variables: Record<string, unknown>
  tags: string[]
  restrictionLevel: RestrictionLevel
  createdBy: User | null
  createdAt: Date
  lastAccessedAt: Date | null
}

/** A text card shown by a tile. */
export interface TextCard {
  id: number
  body: string
  createdBy: User | null
  lastModifiedAt: Date
  projectId: number
}

/** A tile places one insight or one text card on a dashboard, with its grid layouts. */
export interface Tile {
  id: number
  dashboardId: number
  insight: Insight | null
  text: TextCard | null
  layouts: Record<string, unknown>
  color: string | null
  filtersOverrides: Record<string, unknown> | null
  deleted: boolean
}

/** The writable fields of a dashboard; on update only the fields present change. */
export interface DashboardInput {
  name?: string | null
  description?: string
  pinned?: boolean
  deleted?: boolean
  filters?: Record<string, unknown>
  tags?: string[]
  restrictionLevel?: RestrictionLevel
}

/** A tile change sent in a dashboard PATCH (`tiles: [...]`): an existing tile by id, or a new text card. */
export interface TileInput {
  id?: number
  layouts?: Record<string, unknown>
  color?: string | null
  deleted?: boolean
  filtersOverrides?: Record<string, unknown> | null
  text?: { body: string }
}

/** A template tile, as in PostHog's dashboard template JSON. */
export interface TemplateTile {
  type: string
  name?: string | null
  description?: string | null
  query?: Record<string, unknown> | null
  filters?: Record<string, unknown> | null
  body?: string | null
  layouts?: Record<string, unknown> | null
  color?: string | null
}

/** A dashboard template document (PostHog's `dashboard_template_schema.json`). */
export interface DashboardTemplate {
  template_name: string
  dashboard_description: string
  dashboard_filters: Record<string, unknown>
  tags?: string[]
  tiles: TemplateTile[]
}
