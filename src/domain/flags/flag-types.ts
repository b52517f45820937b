import type { PropertyBag, PropertyFilter, PropertyGroup } from '../properties/property-filter.ts'

/** One condition set of a flag (`filters.groups[i]`), as PostHog stores it. */
export interface FlagConditionGroup {
  properties?: readonly PropertyFilter[] | null
  /** null or absent means 100 %. */
  rollout_percentage?: number | null
  /** Forces this variant when the condition matches (if the variant exists). */
  variant?: string | null
  /** Mixed targeting: overrides the flag-level aggregation for this condition. */
  aggregation_group_type_index?: number | null
}

export interface FlagVariant {
  key: string
  name?: string | null
  rollout_percentage: number
}

/** Experiment holdout (`filters.holdout`, current PostHog). */
export interface FlagHoldout {
  id: number | string
  exclusion_percentage: number
}

/** A flag's `filters` JSON as PostHog stores it. */
export interface FlagFilters {
  groups?: readonly FlagConditionGroup[] | null
  multivariate?: { variants?: readonly FlagVariant[] | null } | null
  /** Keyed by variant key or `"true"`; values are returned as stored (usually JSON strings). */
  payloads?: Readonly<Record<string, unknown>> | null
  aggregation_group_type_index?: number | null
  /** Early-access enrolment gate (legacy form): only the first group is used. */
  super_groups?: readonly FlagConditionGroup[] | null
  /** Early-access enrolment gate (current form): reads `$feature_enrollment/<flag key>`. */
  feature_enrollment?: boolean | null
  /** Older holdout form: only the first group is used; properties are not supported. */
  holdout_groups?: readonly FlagConditionGroup[] | null
  holdout?: FlagHoldout | null
  /** Legacy flags without `groups` keep their single condition here. */
  properties?: readonly PropertyFilter[] | null
}

/** A feature flag definition, shape as stored by PostHog (`posthog_featureflag`). */
export interface FlagDefinition {
  id: number | string
  key: string
  name?: string | null
  active: boolean
  deleted?: boolean
  ensure_experience_continuity?: boolean | null
  filters: FlagFilters
  version?: number | null
  /** Legacy column used when `filters.groups` is absent. */
  rollout_percentage?: number | null
  /** `device_id` buckets person conditions by the request's device id. */
  bucketing_identifier?: 'distinct_id' | 'device_id' | string | null
}

/**
 * A cohort as PostHog stores it. Dynamic cohorts carry `filters.properties` (nested AND/OR
 * groups over person properties, possibly referencing other cohorts) or the legacy `groups`
 * list; static cohorts are decided by the caller's membership list.
 */
export interface CohortDefinition {
  id: number | string
  is_static?: boolean
  deleted?: boolean
  filters?: { properties?: PropertyGroup | null } | null
  groups?: ReadonlyArray<{ properties?: readonly PropertyFilter[] | Record<string, unknown> | null }> | null
}

export interface CompileFlagsOptions {
  cohorts?: readonly CohortDefinition[]
  /** Group type index -> group type name (`{0: "company"}`). */
  groupTypeMapping?: Readonly<Record<number | string, string>>
}

/** Everything known about the subject of one evaluation. */
export interface FlagEvaluationContext {
  distinctId: string
  /** Stored person properties merged with request overrides (overrides win). */
  personProperties?: PropertyBag
  /** Group type name -> group key, e.g. `{company: "acme"}`. */
  groups?: Readonly<Record<string, string | number>>
  /** Group type name -> stored group properties merged with request overrides. */
  groupProperties?: Readonly<Record<string, PropertyBag>>
  /** Experience continuity: flag key -> stored hash key override. */
  hashKeyOverrides?: Readonly<Record<string, string>>
  /** The request's `$anon_distinct_id`: hash key for continuity flags without a stored override. */
  anonDistinctId?: string | null
  /** The request's `$device_id`, for flags with `bucketing_identifier: "device_id"`. */
  deviceId?: string | null
  /** Ids of the static cohorts the person belongs to. */
  staticCohortIds?: ReadonlySet<number | string> | readonly (number | string)[]
  /** Evaluation time in epoch milliseconds (relative date filters). */
  now: number
  /** Evaluate and return only these flags (their dependencies are evaluated as needed). */
  flagKeysToEvaluate?: readonly string[] | null
  /** Also return inactive flags, as `enabled: false` with reason `flag_disabled`. */
  includeInactive?: boolean
}

export type FlagReasonCode =
  | 'condition_match'
  | 'no_condition_match'
  | 'out_of_rollout_bound'
  | 'no_group_type'
  | 'super_condition_value'
  | 'holdout_condition_value'
  | 'flag_disabled'
  | 'missing_dependency'

export interface FlagReason {
  code: FlagReasonCode
  conditionIndex: number | null
  description: string
}

/** One flag's result, the content of a /flags v2 `flags[key]` entry. */
export interface FlagEvaluation {
  key: string
  enabled: boolean
  variant: string | null
  /** `false`, `true` or the variant key: the legacy `featureFlags[key]` value. */
  value: boolean | string
  /** Payload for the resulting value as stored; null when disabled or absent. */
  payload: unknown
  reason: FlagReason
  flagId: number | string
  version: number | null
  /** True when the flag could not be computed (dependency cycle or missing dependency). */
  errored: boolean
}

export interface FlagEvaluationResult {
  /** In the order of the definitions given to compileFlags. */
  flags: FlagEvaluation[]
  /** PostHog's `errorsWhileComputingFlags`. */
  errorsWhileComputingFlags: boolean
}
