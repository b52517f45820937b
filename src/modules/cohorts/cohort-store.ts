import type { Page } from '../../shared/page.ts'
import type { Cohort, CohortWrite } from './cohort-types.ts'

/** Persistence for cohorts and static cohort membership. */
export interface CohortStore {
  /** Cohorts of the project that are not soft-deleted, newest first. */
  listLive(projectId: number): Promise<Cohort[]>
  /** One page of the live cohorts, newest first, and how many there are. */
  list(projectId: number, page: Page): Promise<{ count: number; rows: Cohort[] }>
  get(projectId: number, id: number): Promise<Cohort | null>
  insert(input: { projectId: number; userId: number; cohort: CohortWrite }): Promise<Cohort>
  /** Replaces the writable fields and increments `version`. */
  update(input: { projectId: number; id: number; cohort: CohortWrite }): Promise<Cohort>
  /** Adds persons to a static cohort (already-members are ignored). */
  addMembers(cohortId: number, personIds: readonly number[]): Promise<void>
}
