import type { PropertyOperator } from '../../domain/properties/property-operators.ts'

/**
 * A filter on one event property (PostHog's property filter with `type: "event"`), checked by the
 * route: an operator event SQL runs, a value of its shape. Stores run it with the event-SQL layer's
 * operator semantics (the query engine's).
 */
export interface EventPropertyFilter {
  key: string
  value?: unknown
  operator: PropertyOperator
}

export interface EventListQuery {
  projectId: number
  event?: string
  distinctId?: string
  /** ISO-8601 bounds, exclusive (as PostHog's `after`/`before`). */
  after?: string
  before?: string
  /** With `before`: also include events at exactly `before` whose uuid sorts below this one (cursor tie-break). */
  beforeUuid?: string
  properties: EventPropertyFilter[]
  limit: number
  offset: number
}

/** An event as read back; `timestamp` keeps the stored microseconds. */
export interface EventRow {
  uuid: string
  event: string
  distinctId: string
  /** JSON object text. */
  properties: string
  elementsChain: string
  timestampMicros: bigint
  personId: string | null
}

/** Read side of the event store: newest first, by timestamp then uuid. */
export interface EventReadStore {
  list(query: EventListQuery): Promise<EventRow[]>
  get(projectId: number, uuid: string): Promise<EventRow | null>
}
