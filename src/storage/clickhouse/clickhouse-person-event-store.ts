import type { PersonEventStore } from '../../modules/persons/person-store.ts'
import { rebuildSessions, touchedSessions } from './clickhouse-sessions.ts'
import type { ClickHouse } from './open-clickhouse.ts'
import { intLiteral, stringLiteral } from './clickhouse-literals.ts'
import { currentOverridesSql, overrideVersions, row } from './clickhouse-person-override-store.ts'

/**
 * A person's events in ClickHouse. Deletion (GDPR) is a mutation, `ALTER TABLE events DELETE`, over
 * the events whose effective person is this one (stored person_id, or an old id overridden to it);
 * the call returns once ClickHouse has finished it (18.16 has no mutations_sync: system.mutations is
 * polled). The sessions of those events are then rebuilt from the events left (clickhouse-sessions.ts).
 * Then the overrides that pointed at the person are marked deleted. The count is of the
 * matching events just before the mutation.
 */
export function createClickHousePersonEventStore(ch: ClickHouse): PersonEventStore {
  let chain: Promise<unknown> = Promise.resolve()
  const version = overrideVersions()
  async function deleteEvents(projectId: number, personUuid: string): Promise<number> {
    const m = /^([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})$/i.exec(personUuid)
    if (!m) return 0
    const target = m.slice(1).join('-').toLowerCase()
    // UUIDs compared as text: 18.16 refuses a UUID literal against an aggregated or Nullable UUID.
    const person = stringLiteral(target)
    const olds = await ch.query<{ old: string }>(
      `SELECT toString(old_person_id) AS old FROM (${currentOverridesSql(projectId)}) WHERE toString(override_person_id) = ${person}`,
    )
    const ids = [person, ...olds.map((o) => stringLiteral(o.old))].join(', ')
    const where = `project_id = ${intLiteral(projectId)} AND toString(person_id) IN (${ids})`
    const count = Number((await ch.query<{ n: string }>(`SELECT count() AS n FROM events WHERE ${where}`))[0]?.n ?? 0)
    if (count > 0) {
      const sessions = await touchedSessions(ch, projectId, where)
      await ch.exec(`ALTER TABLE events DELETE WHERE ${where}`)
      await ch.awaitMutations('events')
      await rebuildSessions(ch, projectId, sessions)
    }
    if (olds.length > 0) await ch.insert('person_overrides', olds.map((o) => row(projectId, o.old, target, version(), true)))
    return count
  }
  return {
    deletePersonEvents(projectId, personUuid) {
      const run = chain.then(() => deleteEvents(projectId, personUuid))
      chain = run.catch(() => undefined)
      return run
    },
  }
}
