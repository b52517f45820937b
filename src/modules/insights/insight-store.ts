import type { Page } from '../../shared/page.ts'
import type { Insight, InsightCache, InsightInput } from './insight-types.ts'

/** Persistence for insights and their placement on dashboards (tiles). Every method is project-scoped. */
export interface InsightStore {
  /** Runs `fn` with a store bound to one transaction: all of it is written or none. */
  inTransaction<T>(fn: (tx: InsightStore) => Promise<T>): Promise<T>
  /** Live (not deleted) insights, most recently modified first. */
  list(projectId: number, page: Page): Promise<{ count: number; rows: Insight[] }>
  find(projectId: number, id: number, opts?: { includeDeleted?: boolean }): Promise<Insight | null>
  insert(input: InsightInput & { projectId: number; createdBy: number | null }): Promise<number>
  /** Changes the given fields; a new `query` drops the cached result. */
  update(projectId: number, id: number, input: InsightInput): Promise<void>
  /** Keeps a computed result for the insight (replacing the previous one). */
  saveResult(projectId: number, id: number, cache: InsightCache): Promise<void>
  /** Which of `ids` are dashboards of the project, and whether each is deleted. */
  findDashboards(projectId: number, ids: number[]): Promise<{ id: number; deleted: boolean }[]>
  /**
   * Places the insight on exactly these dashboards: a tile is created (or un-deleted) on each, and
   * tiles on dashboards not listed are soft-deleted.
   */
  setDashboards(insightId: number, dashboardIds: number[]): Promise<void>
}
