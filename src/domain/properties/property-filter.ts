/** A bag of properties (person, group or event), as JSON values keyed by property name. */
export type PropertyBag = Readonly<Record<string, unknown>>

import type { PropertyOperator } from './property-operators.ts'

export type { PropertyOperator } from './property-operators.ts'

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
