/** Every property-filter operator PostHog's API accepts (flags, cohorts, and later actions and insights). */
export const KNOWN_OPERATORS: ReadonlySet<string> = new Set([
  'exact', 'is_not', 'is_set', 'is_not_set', 'icontains', 'not_icontains', 'icontains_multi', 'not_icontains_multi',
  'starts_with', 'not_starts_with', 'ends_with', 'not_ends_with', 'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte',
  'between', 'not_between', 'is_date_before', 'is_date_after', 'is_date_exact', 'semver_eq', 'semver_neq', 'semver_gt',
  'semver_gte', 'semver_lt', 'semver_lte', 'semver_tilde', 'semver_caret', 'semver_wildcard', 'in', 'not_in', 'flag_evaluates_to',
])
