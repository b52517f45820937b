/** A bag of properties (person, group or event), as JSON values keyed by property name. */
export type PropertyBag = Readonly<Record<string, unknown>>

/** Operators PostHog accepts on a property filter (`exact` when absent). */
export type PropertyOperator =
  | 'exact'
  | 'is_not'
  | 'is_set'
  | 'is_not_set'
  | 'icontains'
  | 'not_icontains'
  | 'icontains_multi'
  | 'not_icontains_multi'
  | 'starts_with'
  | 'not_starts_with'
  | 'ends_with'
  | 'not_ends_with'
  | 'regex'
  | 'not_regex'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'between'
  | 'not_between'
  | 'is_date_before'
  | 'is_date_after'
  | 'is_date_exact'
  | 'semver_eq'
  | 'semver_neq'
  | 'semver_gt'
  | 'semver_gte'
  | 'semver_lt'
  | 'semver_lte'
  | 'semver_tilde'
  | 'semver_caret'
  | 'semver_wildcard'
  | 'in'
  | 'not_in'
  | 'flag_evaluates_to'

/**
 * One property filter as PostHog stores it in flag `filters`, cohort definitions and action
 * steps. Wire names are kept (`group_type_index`), since these objects are stored verbatim.
 */
export interface PropertyFilter {
  key: string
  value?: unknown
  /** Unknown operators are kept as strings and never match. */
  operator?: PropertyOperator | string | null
  /** `person` | `group` | `cohort` | `flag` | `event` | `element` | ... */
  type?: string | null
  group_type_index?: number | null
  /** Inverts the filter inside cohort property groups. */
  negation?: boolean | null
  /** Set by PostHog's local-evaluation endpoint on `flag` filters; ignored by the server path. */
  dependency_chain?: readonly string[] | null
}

/** A nested AND/OR group of filters (cohort definitions, `filters.properties`). */
export interface PropertyGroup {
  type: 'AND' | 'OR' | string
  values: ReadonlyArray<PropertyGroup | PropertyFilter>
}

/** True when the node is a nested group rather than a single filter. */
export function isPropertyGroup(node: PropertyGroup | PropertyFilter): node is PropertyGroup {
  return Array.isArray((node as PropertyGroup).values)
}
