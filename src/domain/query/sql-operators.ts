/**
 * Property operators the event store's SQL compiles (`storage/duckdb/duckdb-action-property-sql.ts`);
 * `is_date_*` and `semver_*` are left out, so a query naming them is a 400 rather than a wrong answer.
 */
export const SQL_OPERATORS = [
  'exact', 'is_not', 'is_set', 'is_not_set', 'icontains', 'not_icontains', 'starts_with', 'not_starts_with',
  'ends_with', 'not_ends_with', 'icontains_multi', 'not_icontains_multi', 'regex', 'not_regex',
  'gt', 'gte', 'lt', 'lte', 'between', 'not_between',
] as const
