import type { ActionEventReads } from '../../modules/actions/action-event-reads.ts'
import type { ActionStepDefinition } from '../../domain/actions/match-action.ts'
import { compileActionSql } from '../event-sql/action-sql.ts'
import { clickHouseEventDialect as d } from './clickhouse-event-dialect.ts'
import type { ClickHouse } from './open-clickhouse.ts'

/**
 * Action counts and people on ClickHouse, through the shared action SQL (storage/event-sql) and the
 * ClickHouse dialect: one statement each, over the project's events (`[after, before)` on the exact
 * millisecond), persons resolved through the person overrides at query time.
 */
export function createClickHouseActionReads(ch: ClickHouse): ActionEventReads {
  function matching(projectId: number, steps: readonly ActionStepDefinition[], range: { after?: Date; before?: Date }, person: boolean): string {
    const params = d.createParams()
    const action = compileActionSql(steps, d, params)
    const where = [action.condition]
    if (range.after) where.push(`e.timestamp_ms >= ${Math.trunc(range.after.getTime())}`)
    if (range.before) where.push(`e.timestamp_ms < ${Math.trunc(range.before.getTime())}`)
    return `${d.eventsFrom(projectId, params, { person, elements: action.needsElements })} AND ${where.join(' AND ')}`
  }
  return {
    async countActionMatches(projectId, steps, range) {
      const rows = await ch.query<{ n: number | string }>(`SELECT count() AS n FROM ${matching(projectId, steps, range, false)}`, {
        settings: { join_use_nulls: 1 },
      })
      return Number(rows[0]?.n ?? 0)
    },
    async actionPersons(projectId, steps, query) {
      const limit = Math.max(0, Math.floor(query.limit))
      const offset = Math.max(0, Math.floor(query.offset))
      const rows = await ch.query<{ person: string }>(
        `SELECT DISTINCT toString(${d.personId}) AS person FROM ${matching(projectId, steps, query, true)}
         AND e.person_id IS NOT NULL ORDER BY person LIMIT ${offset}, ${limit + 1}`,
        { settings: { join_use_nulls: 1 } },
      )
      const ids = rows.map((r) => r.person)
      return { personIds: ids.slice(0, limit), hasMore: ids.length > limit }
    },
  }
}
