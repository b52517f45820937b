import { AppError } from '../../shared/errors.ts'
import type { Page } from '../../shared/page.ts'
import type { DefinitionStore } from './definition-store.ts'
import type { EventDefinitionQuery, PropertyDefinitionQuery } from './definition-types.ts'

/**
 * Reads of the event and property definitions the ingestion pipeline keeps (definitions-step.ts).
 * Definitions are created only by ingestion, as in PostHog's open-source edition.
 */
export function createDefinitionService(store: DefinitionStore) {
  return {
    listEvents: (projectId: number, query: EventDefinitionQuery, page: Page) => store.listEvents(projectId, query, page),
    async getEvent(projectId: number, id: string) {
      const found = await store.getEvent(projectId, id)
      if (!found) throw new AppError('not_found', 'Not found.')
      return found
    },
    /** PostHog's `seen_together`: for each event name, whether the event property was seen with it. */
    async seenTogether(projectId: number, eventNames: readonly string[], property: string): Promise<Record<string, boolean>> {
      const seen = await store.eventsWithProperty(projectId, eventNames, property)
      return Object.fromEntries(eventNames.map((e) => [e, seen.has(e)]))
    },
    listProperties: (projectId: number, query: PropertyDefinitionQuery, page: Page) => store.listProperties(projectId, query, page),
    async getProperty(projectId: number, id: string) {
      const found = await store.getProperty(projectId, id)
      if (!found) throw new AppError('not_found', 'Not found.')
      return found
    },
  }
}

export type DefinitionService = ReturnType<typeof createDefinitionService>
