import type { SqlClient } from '../storage/sql/sql-client.ts'
import { createSqlPersonStore } from '../storage/sql/sql-person-store.ts'
import { createSqlGroupStore } from '../storage/sql/sql-group-store.ts'
import { createPersonService } from '../modules/persons/person-service.ts'
import type { PersonEventStore } from '../modules/persons/person-store.ts'
import { createGroupService } from '../modules/groups/group-service.ts'
import { createActionPeople } from '../modules/actions/action-people.ts'
import type { ActionEventReads } from '../modules/actions/action-event-reads.ts'
import type { ActionService } from '../modules/actions/action-service.ts'
import type { EventQueue } from '../queue/event-queue.ts'

/**
 * The persons side of the API: persons (reads, property changes through the queue, deletion with
 * their events), groups, and the persons of an action. `cache` is /decide's person cache, which a
 * deletion must invalidate.
 */
export function createPersonServices(deps: {
  meta: SqlClient
  personEvents: PersonEventStore
  queue: Pick<EventQueue, 'publish'>
  cache: { invalidatePersons(projectId: number, distinctIds: readonly string[]): void }
  actions: ActionService
  actionEvents: ActionEventReads
}) {
  const personStore = createSqlPersonStore(deps.meta)
  return {
    /** The events API's look-up of a page's persons. */
    eventPersons: personStore,
    persons: createPersonService({ store: personStore, events: deps.personEvents, queue: deps.queue, cache: deps.cache }),
    groups: createGroupService(createSqlGroupStore(deps.meta)),
    actionPeople: createActionPeople({ actions: deps.actions, events: deps.actionEvents, persons: personStore }),
  }
}
