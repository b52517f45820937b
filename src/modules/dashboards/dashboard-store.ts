import type { Page } from '../../shared/page.ts'
import type { InsightInput } from '../insights/insight-types.ts'
import type { CreationMode, Dashboard, DashboardInput, Tile } from './dashboard-types.ts'

export interface NewTile {
  dashboardId: number
  insightId?: number
  textId?: number
  layouts?: Record<string, unknown> | null
  color?: string | null
  filtersOverrides?: Record<string, unknown> | null
}

/** Persistence for dashboards, their tiles and text cards. Every read is project-scoped. */
export interface DashboardStore {
  /** Runs `fn` with a store bound to one transaction: all of it is written or none. */
  inTransaction<T>(fn: (tx: DashboardStore) => Promise<T>): Promise<T>
  /** Live dashboards ordered as PostHog lists them: pinned first, then by name. */
  list(projectId: number, page: Page): Promise<{ count: number; rows: Dashboard[] }>
  find(projectId: number, id: number, opts?: { includeDeleted?: boolean }): Promise<Dashboard | null>
  insert(input: DashboardInput & { projectId: number; createdBy: number; creationMode: CreationMode }): Promise<number>
  update(projectId: number, id: number, input: DashboardInput): Promise<void>
  /** Records a view (`last_accessed_at = now`). */
  touch(id: number): Promise<void>
  /** Live tiles (a deleted insight hides its tile), unordered. */
  tiles(dashboardId: number): Promise<Tile[]>
  /** One tile of the dashboard, deleted or not. */
  findTile(dashboardId: number, tileId: number): Promise<{ id: number; insightId: number | null; textId: number | null; deleted: boolean } | null>
  insertTile(tile: NewTile): Promise<number>
  updateTile(tileId: number, patch: { layouts?: Record<string, unknown>; color?: string | null; deleted?: boolean; filtersOverrides?: Record<string, unknown> | null }): Promise<void>
  moveTile(tileId: number, toDashboardId: number): Promise<void>
  insertText(input: { projectId: number; body: string; createdBy: number }): Promise<number>
  updateText(textId: number, body: string): Promise<void>
  insertInsight(input: InsightInput & { projectId: number; createdBy: number | null }): Promise<number>
  /** Soft-deletes (or restores) every tile of the dashboard. */
  setTilesDeleted(dashboardId: number, deleted: boolean): Promise<void>
  /** Insights with a tile on this dashboard and no live tile on any other live dashboard. */
  insightsOnlyOn(dashboardId: number): Promise<number[]>
  /** Insights with a tile (deleted or not) on this dashboard. */
  insightsOn(dashboardId: number): Promise<number[]>
  setInsightsDeleted(insightIds: number[], deleted: boolean): Promise<void>
  /** The user's membership level in the project (1 member, 8 admin, 15 owner), or null. */
  memberLevel(projectId: number, userId: number): Promise<number | null>
}
