import type { SeenDefinitions } from '../../domain/definitions/index.ts'
import type { Page } from '../../shared/page.ts'
import type { EventDefinition, EventDefinitionQuery, PropertyDefinition, PropertyDefinitionQuery } from './definition-types.ts'

/** Persistence for event and property definitions. */
export interface DefinitionStore {
  listEvents(projectId: number, query: EventDefinitionQuery, page: Page): Promise<{ count: number; rows: EventDefinition[] }>
  getEvent(projectId: number, id: string): Promise<EventDefinition | null>
  /** Ordered as PostHog orders them: seen on the filtered events first, then by name. */
  listProperties(projectId: number, query: PropertyDefinitionQuery, page: Page): Promise<{ count: number; rows: PropertyDefinition[] }>
  getProperty(projectId: number, id: string): Promise<PropertyDefinition | null>
  /** Which of `eventNames` the event property `property` was seen with. */
  eventsWithProperty(projectId: number, eventNames: readonly string[], property: string): Promise<Set<string>>
  /**
   * Records what one micro-batch saw, with at most one statement per table: new definitions are
   * created, known ones get `last_seen_at = max(stored, seenAt)`, and a property whose stored type
   * is null takes the detected one (a type once stored never changes). Idempotent; safe against
   * concurrent writers. Names are stored as ingestion stores text (U+0000 as U+FFFD), never refused.
   */
  recordSeen(seen: SeenDefinitions, seenAt: Date): Promise<void>
}
