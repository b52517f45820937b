import type { FlagReasonCode } from './flag-types.ts'

/**
 * Priority of non-matching reasons across conditions; the highest wins, ties go to the later
 * condition (rust/feature-flags/src/flags/flag_match_reason.rs, `score`).
 */
export const REASON_SCORE: Readonly<Record<FlagReasonCode, number>> = {
  super_condition_value: 6,
  holdout_condition_value: 5,
  condition_match: 4,
  out_of_rollout_bound: 3,
  no_condition_match: 2,
  no_group_type: 1,
  flag_disabled: 0,
  missing_dependency: -1,
}

const MATCHED = Array.from({ length: 32 }, (_, i) => `Matched condition set ${i + 1}`)

/**
 * The `reason.description` PostHog's /flags returns for a reason code
 * (rust/feature-flags/src/api/types.rs, `get_reason_description`).
 */
export function describeReason(code: FlagReasonCode, conditionIndex: number | null, groupsNotEvaluated = false): string {
  switch (code) {
    case 'condition_match': {
      const index = conditionIndex ?? 0
      return MATCHED[index] ?? `Matched condition set ${index + 1}`
    }
    case 'no_condition_match':
      return groupsNotEvaluated
        ? 'No matching condition set (group conditions were not evaluated because no group type was provided)'
        : 'No matching condition set'
    case 'out_of_rollout_bound':
      return 'Out of rollout bound'
    case 'no_group_type':
      return 'No group type'
    case 'super_condition_value':
      return 'Super condition value'
    case 'holdout_condition_value':
      return 'Holdout condition value'
    case 'flag_disabled':
      return 'Feature flag is disabled'
    case 'missing_dependency':
      return 'Flag cannot be evaluated due to missing dependency'
  }
}
