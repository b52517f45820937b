import type { EventRetentionStore } from '../../modules/retention/event-retention-store.ts'
import { intLiteral, stringLiteral } from './clickhouse-literals.ts'
import { retainSessions, sessionsAcross } from './clickhouse-sessions.ts'
import type { ClickHouse } from './open-clickhouse.ts'

/**
 * Retention on ClickHouse. Months (the partitions) that end before the cut-off and hold no other
 * project's events are dropped whole (`DROP PARTITION`: no rewrite); the project's remaining old
 * events go by one `ALTER TABLE ... DELETE` mutation, awaited (18.16 has no mutations_sync).
 * Mutations serialise with the GDPR deletes of the same table. The sessions' partials that start
 * before the cut-off go, and the sessions across it are rebuilt from the events left
 * (clickhouse-sessions.ts). Then the project's person overrides
 * that no stored event needs any more go too.
 */
export function createClickHouseEventRetention(ch: ClickHouse): EventRetentionStore {
  return {
    async deleteBefore(projectId, before, _limit) {
      const project = intLiteral(projectId)
      const cutMs = intLiteral(before.getTime())
      // Whole months before the cut-off's month, and only this project's rows in them.
      const months = await ch.query<{ p: string; n: string; others: string }>(
        `SELECT toString(toYYYYMM(timestamp)) AS p, countIf(project_id = ${project}) AS n, countIf(project_id != ${project}) AS others
         FROM events WHERE timestamp_ms < ${cutMs} AND toYYYYMM(timestamp) < toYYYYMM(toDateTime(intDiv(${cutMs}, 1000), 'UTC'))
         GROUP BY p`,
      )
      // The sessions with events on both sides of the cut-off, rebuilt from the events left once the old ones are gone.
      const across = await sessionsAcross(ch, projectId, before.getTime())
      let events = 0
      for (const m of months) {
        if (Number(m.others) !== 0 || Number(m.n) === 0) continue
        await ch.exec(`ALTER TABLE events DROP PARTITION ${intLiteral(Number(m.p))}`)
        events += Number(m.n)
      }
      const where = `project_id = ${project} AND timestamp_ms < ${cutMs}`
      const left = Number((await ch.query<{ n: string }>(`SELECT count() AS n FROM events WHERE ${where}`))[0]?.n ?? 0)
      if (left > 0) {
        await ch.exec(`ALTER TABLE events DELETE WHERE ${where}`)
        await ch.awaitMutations('events')
        events += left
      }
      await retainSessions(ch, projectId, before.getTime(), across)
      const letterWhere = `project_id = ${project} AND failed_at_ms < ${cutMs}`
      const letters = Number((await ch.query<{ n: string }>(`SELECT count() AS n FROM events_dead_letter WHERE ${letterWhere}`))[0]?.n ?? 0)
      if (letters > 0) {
        await ch.exec(`ALTER TABLE events_dead_letter DELETE WHERE ${letterWhere}`)
        await ch.awaitMutations('events_dead_letter')
      }
      return { events, deadLetters: letters, personOverrides: await pruneOverrides(ch, projectId), more: false }
    },
  }
}

/** Old person ids removed per mutation: the list is inlined in its WHERE. */
const OVERRIDES_PER_MUTATION = 1_000

/**
 * Removes the project's person_overrides rows (every version, tombstones too) whose old person has no
 * stored event left: queries join events to the overrides by old person id, so these are never read
 * again. A merged-away person gets no new events (they are stored under the person it became).
 */
async function pruneOverrides(ch: ClickHouse, projectId: number): Promise<number> {
  const project = intLiteral(projectId)
  // Compared as text: 18.16 refuses UUIDs in IN against some UUID expressions ("Got: UInt128").
  const unused = await ch.query<{ old: string }>(
    `SELECT DISTINCT toString(old_person_id) AS old FROM person_overrides WHERE project_id = ${project}
       AND toString(old_person_id) NOT IN (SELECT DISTINCT toString(person_id) FROM events WHERE project_id = ${project} AND isNotNull(person_id))`,
  )
  for (let i = 0; i < unused.length; i += OVERRIDES_PER_MUTATION) {
    const olds = unused.slice(i, i + OVERRIDES_PER_MUTATION).map((r) => stringLiteral(r.old)).join(', ')
    await ch.exec(`ALTER TABLE person_overrides DELETE WHERE project_id = ${project} AND toString(old_person_id) IN (${olds})`)
  }
  if (unused.length > 0) await ch.awaitMutations('person_overrides')
  return unused.length
}
