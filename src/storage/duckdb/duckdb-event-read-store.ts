import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api'
import type { EventListQuery, EventReadStore, EventRow } from '../../modules/events/event-read-store.ts'
import { stepFilterSql } from '../event-sql/action-sql.ts'
import { duckDbEventDialect as d } from './duckdb-event-dialect.ts'
import type { SqlParams } from '../event-sql/sql-params.ts'

/** The columns an EventRow is read from (`toEventRow`). */
export const EVENT_COLUMNS = `uuid::VARCHAR AS uuid, event, distinct_id, properties, elements_chain,
  epoch_us(timestamp) AS ts, person_id::VARCHAR AS person_id`

/**
 * Reads events from DuckDB on its own connection, so reads never wait behind the ingestion
 * writer. Property filters are the event-SQL layer's, as in every query.
 */
export function createDuckDbEventReadStore(connection: DuckDBConnection): EventReadStore {
  async function query(sql: string, params: readonly (string | number | boolean)[]): Promise<EventRow[]> {
    const reader = await connection.runAndReadAll(sql, params as DuckDBValue[])
    return reader.getRowObjects().map(toEventRow)
  }

  return {
    list(q: EventListQuery) {
      const params = d.createParams()
      const where = eventWhereSql(q, params)
      return query(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE ${where.join(' AND ')}
         ORDER BY timestamp DESC, uuid DESC LIMIT ${params.add(q.limit)} OFFSET ${params.add(q.offset)}`,
        params.values,
      )
    },
    async get(projectId, uuid) {
      const rows = await query(`SELECT ${EVENT_COLUMNS} FROM events WHERE project_id = $1 AND uuid = $2::UUID`, [projectId, uuid])
      return rows[0] ?? null
    },
  }
}

/**
 * The WHERE conditions of an events API or export query, parameters added to `params`: project, name,
 * distinct id, the bounds (`from` inclusive, `after`/`before` exclusive, the cursor's tie-break) and
 * property filters through the event-SQL layer (one implementation of each operator).
 */
export function eventWhereSql(q: Omit<EventListQuery, 'limit' | 'offset'> & { from?: string }, params: SqlParams): string[] {
  const where: string[] = [`project_id = ${params.add(q.projectId)}`]
  if (q.event !== undefined) where.push(`event = ${params.add(q.event)}`)
  if (q.distinctId !== undefined) where.push(`distinct_id = ${params.add(q.distinctId)}`)
  if (q.from !== undefined) where.push(`timestamp >= ${d.time(q.from, params)}`)
  if (q.after !== undefined) where.push(`timestamp > ${d.time(q.after, params)}`)
  if (q.before !== undefined && q.beforeUuid !== undefined) {
    const before = d.time(q.before, params)
    where.push(`(timestamp < ${before} OR (timestamp = ${before} AND uuid < ${params.add(q.beforeUuid)}::UUID))`)
  } else if (q.before !== undefined) {
    where.push(`timestamp < ${d.time(q.before, params)}`)
  }
  for (const f of q.properties) where.push(stepFilterSql({ ...f, type: 'event' }, d, params).condition)
  return where
}

/** An EventRow from a row of EVENT_COLUMNS. */
export function toEventRow(r: Record<string, DuckDBValue>): EventRow {
  return {
    uuid: String(r.uuid),
    event: String(r.event),
    distinctId: String(r.distinct_id),
    properties: String(r.properties),
    elementsChain: String(r.elements_chain ?? ''),
    timestampMicros: BigInt(r.ts as bigint),
    personId: r.person_id === null ? null : String(r.person_id),
  }
}
