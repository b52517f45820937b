import type { EventRetentionStore } from '../../modules/retention/event-retention-store.ts'
import { intLiteral } from './clickhouse-literals.ts'
import type { ClickHouse } from './open-clickhouse.ts'

/**
 * Retention on ClickHouse. Months (the partitions) that end before the cut-off and hold no other
 * project's events are dropped whole (`DROP PARTITION`: no rewrite); the project's remaining old
 * events go by one `ALTER TABLE ... DELETE` mutation, awaited (18.16 has no mutations_sync).
 * Mutations serialise with the GDPR deletes of the same table.
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
      const letterWhere = `project_id = ${project} AND failed_at_ms < ${cutMs}`
      const letters = Number((await ch.query<{ n: string }>(`SELECT count() AS n FROM events_dead_letter WHERE ${letterWhere}`))[0]?.n ?? 0)
      if (letters > 0) {
        await ch.exec(`ALTER TABLE events_dead_letter DELETE WHERE ${letterWhere}`)
        await ch.awaitMutations('events_dead_letter')
      }
      return { events, deadLetters: letters, more: false }
    },
  }
}
