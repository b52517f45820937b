import type { PropertyGroup } from '../../domain/properties/property-filter.ts'
import type { User } from '../projects/project-types.ts'

/**
 * A cohort (PostHog's `posthog_cohort`). Dynamic cohorts hold nested AND/OR property groups in
 * `filters.properties`; static cohorts hold a member list (`cohort_people`).
 */
export interface Cohort extends CohortWrite {
  id: number
  projectId: number
  version: number
  /** Members of a static cohort; null for dynamic cohorts (not computed by Tally). */
  count: number | null
  createdBy: User | null
  createdAt: Date
  lastCalculation: Date | null
}

export interface CohortWrite {
  name: string
  description: string
  filters: { properties: PropertyGroup } | null
  /** Legacy definition (list of OR-ed groups); kept as sent. */
  groups: unknown[]
  isStatic: boolean
  deleted: boolean
}
