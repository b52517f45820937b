import type { SqlClient } from '../storage/sql/sql-client.ts'
import type { EventStore } from '../modules/events/event-store.ts'
import { createSqlProjectStore } from '../storage/sql/sql-project-store.ts'
import { createProjectService } from '../modules/projects/project-service.ts'

export interface Stores {
  meta: SqlClient
  events: EventStore
}

/** Builds every service from the opened stores. Knows the SQL stores, not which driver runs them. */
export function createServices(stores: Stores) {
  const projects = createProjectService(createSqlProjectStore(stores.meta))
  return { projects, eventStore: stores.events }
}

export type Services = ReturnType<typeof createServices>
