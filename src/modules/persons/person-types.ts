import type { PropertyFilter } from '../../domain/properties/property-filter.ts'

/** A stored person as the persons API reads it (PostHog's posthog_person with its distinct ids). */
export interface Person {
  /** The numeric primary key (PostHog's `pk`). */
  id: number
  uuid: string
  properties: Record<string, unknown>
  isIdentified: boolean
  createdAt: Date
  /** Every distinct id of the person, in no particular order. */
  distinctIds: string[]
}

/** Filters of the persons list (PostHog's PersonViewSet.list); every one is optional, all must hold. */
export interface PersonListQuery {
  /** The person of this distinct id. */
  distinctId?: string
  /** PostHog's `search`: the email property contains it (any case), or a distinct id equals it. */
  search?: string
  /** The `email` property equals it. */
  email?: string
  /** Person properties, PostHog's operators (`type: "person"` filters only). */
  properties: PropertyFilter[]
}

/** One value of a person property and how many persons hold it (`/persons/values/`). */
export interface PersonPropertyValue {
  value: unknown
  count: number
}

/** What `delete` removed: the person's uuid and distinct ids (for the caches and the events). */
export interface DeletedPerson {
  uuid: string
  distinctIds: string[]
}
