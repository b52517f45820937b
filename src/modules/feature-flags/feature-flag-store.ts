import type { FeatureFlag, FeatureFlagWrite } from './feature-flag-types.ts'

/** Persistence for flag definitions. Keys are unique among the live (not deleted) flags of a project. */
export interface FeatureFlagStore {
  /** Every flag of the project that is not soft-deleted, newest first. */
  listLive(projectId: number): Promise<FeatureFlag[]>
  /** One flag of the project, deleted ones included; null when absent. */
  get(projectId: number, id: number): Promise<FeatureFlag | null>
  /** True when a live flag of the project (other than `exceptId`) has this key. */
  keyExists(projectId: number, key: string, exceptId?: number): Promise<boolean>
  /** Inserts a flag (version 1), hard-deleting a soft-deleted flag with the same key first, as PostHog does. */
  insert(input: { projectId: number; userId: number; flag: FeatureFlagWrite }): Promise<FeatureFlag>
  /** Replaces the writable fields and increments `version`. */
  update(input: { projectId: number; id: number; userId: number; flag: FeatureFlagWrite }): Promise<FeatureFlag>
}
