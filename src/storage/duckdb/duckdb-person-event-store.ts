import type { DuckDBConnection } from '@duckdb/node-api'
import type { PersonEventStore } from '../../modules/persons/person-store.ts'
import { noteTouchedSessions, rebuildTouchedSessions, serializeSessionRewrite } from './duckdb-sessions.ts'

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i

/**
 * A person's events in DuckDB, on a connection of its own. Deletion is one transaction: the events
 * whose effective person (`COALESCE(override_person_id, person_id)`) is the person, then the
 * overrides that pointed at it (nothing else resolves to a deleted person). The sessions of those
 * events are rebuilt from the events left in the same transaction (duckdb-sessions.ts).
 */
export function createDuckDbPersonEventStore(c: DuckDBConnection): PersonEventStore {
  let chain: Promise<unknown> = Promise.resolve()
  async function deleteEvents(projectId: number, personUuid: string): Promise<number> {
    if (!UUID.test(personUuid)) return 0
    await c.run('BEGIN TRANSACTION')
    try {
      const isPersons = `person_id = $2::UUID OR person_id IN (
           SELECT old_person_id FROM person_overrides WHERE project_id = $1 AND override_person_id = $2::UUID)`
      await noteTouchedSessions(c, projectId, isPersons, [personUuid])
      const reader = await c.runAndReadAll(`DELETE FROM events WHERE project_id = $1 AND (${isPersons}) RETURNING uuid`, [projectId, personUuid])
      await rebuildTouchedSessions(c, projectId)
      await c.run('DELETE FROM person_overrides WHERE project_id = $1 AND override_person_id = $2::UUID', [projectId, personUuid])
      await c.run('COMMIT')
      return reader.currentRowCount
    } catch (err) {
      await c.run('ROLLBACK').catch(() => undefined)
      throw err
    }
  }
  return {
    // One transaction at a time on this connection (DuckDB's BEGIN is per connection).
    deletePersonEvents(projectId, personUuid) {
      const run = chain.then(() => serializeSessionRewrite(() => deleteEvents(projectId, personUuid)))
      chain = run.catch(() => undefined)
      return run
    },
  }
}
