/**
 * Property operators the event store's SQL compiles (`storage/duckdb/duckdb-action-property-sql.ts`):
 * the domain matcher's, less `in`/`not_in` (cohorts, expanded by the query) and `flag_evaluates_to`.
 */
export const SQL_OPERATORS = [
  'exact', 'is_not', 'is_set', 'is_not_set', 'icontains', 'not_icontains', 'starts_with', 'not_starts_with',
  'ends_with', 'not_ends_with', 'icontains_multi', 'not_icontains_multi', 'regex', 'not_regex',
  'gt', 'gte', 'lt', 'lte', 'between', 'not_between', 'is_date_before', 'is_date_after', 'is_date_exact',
  'semver_eq', 'semver_neq', 'semver_gt', 'semver_gte', 'semver_lt', 'semver_lte', 'semver_tilde', 'semver_caret', 'semver_wildcard',
] as const
