import type { Page } from '../../shared/page.ts'
import type { FeatureFlag, FeatureFlagWrite } from './feature-flag-types.ts'

/** Persistence for flag definitions. Keys are unique among the live (not deleted) flags of a project. */
export interface FeatureFlagStore {
  /** Every flag of the project that is not soft-deleted, newest first. */
  listLive(projectId: number): Promise<FeatureFlag[]>
  /** One page of the live flags that pass the list filters, in the asked order, and how many pass. */
  list(projectId: number, query: FlagListQuery, page: Page): Promise<{ count: number; rows: FeatureFlag[] }>
  /** One flag of the project, deleted ones included; null when absent. */
  get(projectId: number, id: number): Promise<FeatureFlag | null>
  /** True when a live flag of the project (other than `exceptId`) has this key. */
  keyExists(projectId: number, key: string, exceptId?: number): Promise<boolean>
  /** Inserts a flag (version 1), hard-deleting a soft-deleted flag with the same key first, as PostHog does. */
  insert(input: { projectId: number; userId: number; flag: FeatureFlagWrite }): Promise<FeatureFlag>
  /** Replaces the writable fields and increments `version`. */
  update(input: { projectId: number; id: number; userId: number; flag: FeatureFlagWrite }): Promise<FeatureFlag>
}

/** The list filters of PostHog's flag list (`?active=&search=&created_by_id=&type=&evaluation_runtime=&order=`). */
export interface FlagListQuery {
  active?: boolean
  search?: string
  createdById?: number
  type?: 'boolean' | 'multivariant' | 'experiment' | 'remote_config'
  evaluationRuntime?: string
  /** A sortable field (`key`, `name`, `created_at`, `updated_at`), `-` first for descending. */
  order?: string
}
