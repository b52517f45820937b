import type { PropertyKind, PropertyType } from '../../domain/definitions/index.ts'

/** An event name seen in a project (PostHog's EventDefinition). */
export interface EventDefinition {
  id: string
  name: string
  createdAt: Date
  lastSeenAt: Date
}

/** A property name seen in a project, per kind (PostHog's PropertyDefinition). */
export interface PropertyDefinition {
  id: string
  name: string
  type: PropertyKind
  /** null unless `type` is group. */
  groupTypeIndex: number | null
  propertyType: PropertyType | null
  createdAt: Date
  lastSeenAt: Date
  /** Whether it was seen on one of the `eventNames` asked for (null when none were asked). */
  isSeenOnFilteredEvents: boolean | null
}

export type EventDefinitionOrder = 'name' | '-name' | 'last_seen_at' | '-last_seen_at' | 'created_at' | '-created_at'

/** The filters of an event definition list (PostHog's event_definition.py). */
export interface EventDefinitionQuery {
  /** Every word must appear in the name (case-insensitive). */
  search: readonly string[]
  /** `event_custom`: names not starting with `$`; `event_posthog`: names starting with `$`. */
  eventType: 'event' | 'event_custom' | 'event_posthog'
  ordering: EventDefinitionOrder
}

/** The filters of a property definition list (PostHog's property_definition_api.py). */
export interface PropertyDefinitionQuery {
  type: PropertyKind
  groupTypeIndex: number | null
  search: readonly string[]
  /** Only these names (`properties`, comma-separated); null: all. */
  names: readonly string[] | null
  /** true: numerical only; false or null: all (PostHog ignores false). */
  isNumerical: boolean | null
  isFeatureFlag: boolean | null
  excluded: readonly string[]
  /** Event properties only: leave out every `$` property (PostHog's `exclude_core_properties`, without its taxonomy's few unprefixed names). */
  excludeCoreProperties: boolean
  /** Events the properties were seen with (annotated, listed first); null: not asked. */
  eventNames: readonly string[] | null
  /** With `eventNames`: only the properties seen with them. */
  filterByEventNames: boolean
}
