import type { FlagFilters } from '../../domain/flags/flag-types.ts'
import type { User } from '../projects/project-types.ts'

/** A feature flag as Tally stores it (PostHog's `posthog_featureflag`). */
export interface FeatureFlag {
  id: number
  projectId: number
  key: string
  name: string
  filters: FlagFilters
  /** Legacy column, read only when `filters.groups` is absent. */
  rolloutPercentage: number | null
  active: boolean
  deleted: boolean
  ensureExperienceContinuity: boolean
  tags: string[]
  evaluationRuntime: string
  /** 1 on create, +1 on every change. */
  version: number
  createdBy: User | null
  lastModifiedBy: User | null
  createdAt: Date
  updatedAt: Date
}

/** The writable part of a flag, already validated. */
export interface FeatureFlagWrite {
  key: string
  name: string
  filters: FlagFilters
  active: boolean
  deleted: boolean
  ensureExperienceContinuity: boolean
  tags: string[]
  evaluationRuntime: string
}
