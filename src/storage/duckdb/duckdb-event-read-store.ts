import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api'
import type { EventListQuery, EventPropertyFilter, EventReadStore, EventRow } from '../../modules/events/event-read-store.ts'

const COLUMNS = `uuid::VARCHAR AS uuid, event, distinct_id, properties, elements_chain,
  epoch_us(timestamp) AS ts, person_id::VARCHAR AS person_id`

/**
 * Reads events from DuckDB on its own connection, so reads never wait behind the ingestion
 * writer. Property filters run in SQL on the JSON text (`json_extract_string`).
 */
export function createDuckDbEventReadStore(connection: DuckDBConnection): EventReadStore {
  async function query(sql: string, params: DuckDBValue[]): Promise<EventRow[]> {
    const reader = await connection.runAndReadAll(sql, params)
    return reader.getRowObjects().map((r) => ({
      uuid: String(r.uuid),
      event: String(r.event),
      distinctId: String(r.distinct_id),
      properties: String(r.properties),
      elementsChain: String(r.elements_chain ?? ''),
      timestampMicros: BigInt(r.ts as bigint),
      personId: r.person_id === null ? null : String(r.person_id),
    }))
  }

  return {
    list(q: EventListQuery) {
      const where: string[] = ['project_id = ?']
      const params: DuckDBValue[] = [q.projectId]
      if (q.event !== undefined) {
        where.push('event = ?')
        params.push(q.event)
      }
      if (q.distinctId !== undefined) {
        where.push('distinct_id = ?')
        params.push(q.distinctId)
      }
      if (q.after !== undefined) {
        where.push('timestamp > ?::TIMESTAMPTZ')
        params.push(q.after)
      }
      if (q.before !== undefined && q.beforeUuid !== undefined) {
        where.push('(timestamp < ?::TIMESTAMPTZ OR (timestamp = ?::TIMESTAMPTZ AND uuid < ?::UUID))')
        params.push(q.before, q.before, q.beforeUuid)
      } else if (q.before !== undefined) {
        where.push('timestamp < ?::TIMESTAMPTZ')
        params.push(q.before)
      }
      for (const f of q.properties) where.push(propertyCondition(f, params))
      params.push(q.limit, q.offset)
      return query(
        `SELECT ${COLUMNS} FROM events WHERE ${where.join(' AND ')}
         ORDER BY timestamp DESC, uuid DESC LIMIT ? OFFSET ?`,
        params,
      )
    },
    async get(projectId, uuid) {
      const rows = await query(`SELECT ${COLUMNS} FROM events WHERE project_id = ? AND uuid = ?::UUID`, [projectId, uuid])
      return rows[0] ?? null
    },
  }
}

/**
 * One property filter as SQL over the JSON text (the route has checked each value's kind and the
 * regex). Values are bound; the JSON pointer is a quoted literal (single quotes doubled: DuckDB wants
 * a constant path) so that it can appear twice in one condition.
 */
function propertyCondition(f: EventPropertyFilter, params: DuckDBValue[]): string {
  // A JSON pointer (RFC 6901), not a `$.` path: there `$.""` is a binder error and `$."*"` a wildcard;
  // a pointer names every key literally ('', '*', 'a.b', '~', '/').
  const path = `/${f.key.replace(/~/g, '~0').replace(/\//g, '~1')}`.replace(/'/g, "''")
  // TRY: a row stored before capture cleaned text (a lone surrogate escape DuckDB's JSON reader
  // refuses) reads as "property not set" instead of failing every filtered query of the project.
  const value = `TRY(json_extract_string(properties, '${path}'))`
  const values = (Array.isArray(f.value) ? f.value : [f.value]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
  switch (f.operator) {
    case 'is_set':
      return `${value} IS NOT NULL`
    case 'is_not_set':
      return `${value} IS NULL`
    case 'exact':
    case 'is_not': {
      params.push(...values)
      const list = `${value} IN (${values.map(() => '?').join(', ')})`
      return f.operator === 'exact' ? list : `(${value} IS NULL OR NOT ${list})`
    }
    case 'icontains':
    case 'not_icontains':
      params.push(`%${values[0] ?? ''}%`)
      return f.operator === 'icontains' ? `${value} ILIKE ?` : `(${value} IS NULL OR ${value} NOT ILIKE ?)`
    case 'regex':
    case 'not_regex':
      params.push(values[0] ?? '')
      return f.operator === 'regex'
        ? `regexp_matches(${value}, ?)`
        : `(${value} IS NULL OR NOT regexp_matches(${value}, ?))`
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[f.operator]
      // Bound as text: the driver binds an integral JS number as BIGINT and fails past int64 (1e300).
      params.push(String(Number(values[0])))
      return `TRY_CAST(${value} AS DOUBLE) ${op} CAST(? AS DOUBLE)`
    }
    default:
      throw new Error(`unsupported operator ${f.operator}`)
  }
}
