import type { EventListQuery, EventReadStore, EventRow } from '../../modules/events/event-read-store.ts'
import { stepFilterSql } from '../event-sql/action-sql.ts'
import type { ClickHouse } from './open-clickhouse.ts'
import { clickHouseEventDialect as d } from './clickhouse-event-dialect.ts'
import { intLiteral, stringLiteral, uuidLiteral } from './clickhouse-literals.ts'

// Aliases differ from the column names: a ClickHouse alias is visible in WHERE and ORDER BY too.
/** The columns an EventRow is read from (`toEventRow`). */
export const EVENT_COLUMNS = `toString(uuid) AS uuid_text, event, distinct_id, properties, elements_chain, timestamp_ms, toString(person_id) AS person_text`

export interface EventColumnsRow {
  uuid_text: string
  event: string
  distinct_id: string
  properties: string
  elements_chain: string
  timestamp_ms: string
  person_text: string | null
}

/**
 * Reads events from ClickHouse: newest first by the exact instant, then uuid (as text, DuckDB's
 * order). Property filters are the event-SQL layer's with ClickHouse's dialect (one implementation of
 * each operator): they read the top-level key/value arrays the event store fills, so a key is matched
 * literally and at the top level only (ClickHouse 18.16's visitParam* functions would match it at any depth).
 */
export function createClickHouseEventReadStore(ch: ClickHouse): EventReadStore {
  async function query(sql: string): Promise<EventRow[]> {
    const rows = await ch.query<EventColumnsRow>(sql)
    return rows.map(toEventRow)
  }

  return {
    list(q: EventListQuery) {
      const where = eventWhereSql(q)
      return query(
        `SELECT ${EVENT_COLUMNS} FROM events AS e WHERE ${where.join(' AND ')}
         ORDER BY timestamp_ms DESC, uuid_text DESC LIMIT ${intLiteral(Math.floor(q.offset))}, ${intLiteral(Math.floor(q.limit))}`,
      )
    },
    async get(projectId, uuid) {
      const literal = uuidLiteral(uuid)
      if (literal === null) return null
      const rows = await query(`SELECT ${EVENT_COLUMNS} FROM events WHERE project_id = ${intLiteral(projectId)} AND uuid = ${literal} LIMIT 1`)
      return rows[0] ?? null
    },
  }
}

/** An EventRow from a row of EVENT_COLUMNS. */
export function toEventRow(r: EventColumnsRow): EventRow {
  return {
    uuid: r.uuid_text,
    event: r.event,
    distinctId: r.distinct_id,
    properties: r.properties,
    elementsChain: r.elements_chain,
    timestampMicros: BigInt(r.timestamp_ms) * 1000n,
    personId: r.person_text ?? null,
  }
}

/**
 * The WHERE conditions of an events API or export query: project, name, distinct id, the bounds
 * (`from` inclusive, `after`/`before` exclusive, the cursor's tie-break) in microseconds, so a bound
 * written with more precision than the stored millisecond still compares exactly, and property
 * filters through the event-SQL layer.
 */
export function eventWhereSql(q: Omit<EventListQuery, 'limit' | 'offset'> & { from?: string }): string[] {
  const where: string[] = [`project_id = ${intLiteral(q.projectId)}`]
  if (q.event !== undefined) where.push(`event = ${stringLiteral(q.event)}`)
  if (q.distinctId !== undefined) where.push(`distinct_id = ${stringLiteral(q.distinctId)}`)
  if (q.from !== undefined) where.push(`timestamp_ms * 1000 >= ${intLiteral(isoMicros(q.from))}`)
  if (q.after !== undefined) where.push(`timestamp_ms * 1000 > ${intLiteral(isoMicros(q.after))}`)
  if (q.before !== undefined) {
    const before = intLiteral(isoMicros(q.before))
    where.push(
      q.beforeUuid !== undefined
        ? `(timestamp_ms * 1000 < ${before} OR (timestamp_ms * 1000 = ${before} AND toString(uuid) < ${stringLiteral(q.beforeUuid.toLowerCase())}))`
        : `timestamp_ms * 1000 < ${before}`,
    )
  }
  const params = d.createParams()
  for (const f of q.properties) where.push(stepFilterSql({ ...f, type: 'event' }, d, params).condition)
  return where
}

/**
 * Microseconds since 1970 of an ISO-8601 instant with any offset (`Z`, `+02:00`), keeping digits past
 * the millisecond. Throws a RangeError on text that is not a date (the route has validated it).
 */
export function isoMicros(iso: string): bigint {
  const ms = Date.parse(iso)
  if (Number.isNaN(ms)) throw new RangeError(`not a date: ${iso}`)
  const fraction = /[T ]\d{2}:\d{2}:\d{2}\.(\d+)/.exec(iso)?.[1] ?? ''
  const subMs = Number((fraction.slice(3, 6) + '000').slice(0, 3))
  return BigInt(ms) * 1000n + BigInt(subMs)
}
