import type { EventListQuery, EventPropertyFilter, EventReadStore, EventRow } from '../../modules/events/event-read-store.ts'
import type { ClickHouse } from './open-clickhouse.ts'
import { intLiteral, numberLiteral, stringLiteral, stringList, uuidLiteral } from './clickhouse-literals.ts'

// Aliases differ from the column names: a ClickHouse alias is visible in WHERE and ORDER BY too.
const COLUMNS = `toString(uuid) AS uuid_text, event, distinct_id, properties, elements_chain, timestamp_ms, toString(person_id) AS person_text`

interface Row {
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
 * order). Property filters read the top-level key/value arrays the event store fills, so a key is
 * matched literally and at the top level only (ClickHouse 18.16's visitParam* functions would match it
 * at any depth).
 */
export function createClickHouseEventReadStore(ch: ClickHouse): EventReadStore {
  async function query(sql: string): Promise<EventRow[]> {
    const rows = await ch.query<Row>(sql)
    return rows.map((r) => ({
      uuid: r.uuid_text,
      event: r.event,
      distinctId: r.distinct_id,
      properties: r.properties,
      elementsChain: r.elements_chain,
      timestampMicros: BigInt(r.timestamp_ms) * 1000n,
      personId: r.person_text ?? null,
    }))
  }

  return {
    list(q: EventListQuery) {
      const where: string[] = [`project_id = ${intLiteral(q.projectId)}`]
      if (q.event !== undefined) where.push(`event = ${stringLiteral(q.event)}`)
      if (q.distinctId !== undefined) where.push(`distinct_id = ${stringLiteral(q.distinctId)}`)
      // Microseconds: a bound written with more precision than the stored millisecond still compares exactly.
      if (q.after !== undefined) where.push(`timestamp_ms * 1000 > ${intLiteral(isoMicros(q.after))}`)
      if (q.before !== undefined) {
        const before = intLiteral(isoMicros(q.before))
        where.push(
          q.beforeUuid !== undefined
            ? `(timestamp_ms * 1000 < ${before} OR (timestamp_ms * 1000 = ${before} AND toString(uuid) < ${stringLiteral(q.beforeUuid.toLowerCase())}))`
            : `timestamp_ms * 1000 < ${before}`,
        )
      }
      for (const f of q.properties) where.push(propertyCondition(f))
      return query(
        `SELECT ${COLUMNS} FROM events WHERE ${where.join(' AND ')}
         ORDER BY timestamp_ms DESC, uuid_text DESC LIMIT ${intLiteral(Math.floor(q.offset))}, ${intLiteral(Math.floor(q.limit))}`,
      )
    },
    async get(projectId, uuid) {
      const literal = uuidLiteral(uuid)
      if (literal === null) return null
      const rows = await query(`SELECT ${COLUMNS} FROM events WHERE project_id = ${intLiteral(projectId)} AND uuid = ${literal} LIMIT 1`)
      return rows[0] ?? null
    },
  }
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

/**
 * One property filter as SQL over the top-level arrays. Values are literals (no parameters on 18.16);
 * numbers compare as Float64 (`toFloat64OrNull`: text that is no number matches no comparison).
 */
function propertyCondition(f: EventPropertyFilter): string {
  const key = stringLiteral(f.key)
  const value = `if(has(prop_keys, ${key}), prop_values[indexOf(prop_keys, ${key})], NULL)`
  const set = `has(prop_keys, ${key})`
  const values = (Array.isArray(f.value) ? f.value : [f.value]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
  switch (f.operator) {
    case 'is_set':
      return set
    case 'is_not_set':
      return `NOT ${set}`
    case 'exact':
    case 'is_not': {
      const list = `${value} IN (${stringList(values)})`
      return f.operator === 'exact' ? `(${set} AND ${list})` : `(NOT ${set} OR NOT ${list})`
    }
    case 'icontains':
    case 'not_icontains': {
      const has = `positionCaseInsensitiveUTF8(${value}, ${stringLiteral(values[0] ?? '')}) > 0`
      return f.operator === 'icontains' ? `(${set} AND ${has})` : `(NOT ${set} OR NOT ${has})`
    }
    case 'regex':
    case 'not_regex': {
      const re = `match(${value}, ${stringLiteral(values[0] ?? '')})`
      return f.operator === 'regex' ? `(${set} AND ${re})` : `(NOT ${set} OR NOT ${re})`
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[f.operator]
      return `coalesce(toFloat64OrNull(${value}) ${op} ${numberLiteral(Number(values[0]))}, 0) = 1`
    }
    default:
      throw new Error(`unsupported operator ${f.operator}`)
  }
}
