import { eventKey, eventPropertyKey, propertyKey, type SeenDefinitions } from '../../domain/definitions/index.ts'
import type { DefinitionStore } from '../../modules/definitions/definition-store.ts'
import type { EventDefinition, EventDefinitionQuery, PropertyDefinition, PropertyDefinitionQuery } from '../../modules/definitions/definition-types.ts'
import type { SqlClient } from './sql-client.ts'
import { selectPage } from './sql-page.ts'
import { cannotBeStored, toPgText } from './sql-text.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// PostHog's is_numerical filter leaves these out (property_definition_api.py).
const NOT_NUMERICAL = ['distinct_id', 'timestamp']
// Event properties PostHog never lists: set by ingestion or by some libraries only (ALWAYS_EXCLUDED_EVENT_PROPERTIES).
const ALWAYS_EXCLUDED_EVENT_PROPERTIES = [
  'distinct_id', '$set', '$set_once', '$initial_referrer', '$initial_referring_domain',
  '$groups', '$group_type', '$group_key', '$group_set', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4',
]

const EVENT_ORDER: Record<EventDefinitionQuery['ordering'], string> = {
  name: 'd.name ASC',
  '-name': 'd.name DESC',
  last_seen_at: 'd.last_seen_at ASC, d.name ASC',
  '-last_seen_at': 'd.last_seen_at DESC, d.name ASC',
  created_at: 'd.created_at ASC, d.name ASC',
  '-created_at': 'd.created_at DESC, d.name ASC',
}

function toEventDefinition(r: Record<string, any>): EventDefinition {
  return { id: r.id, name: r.name, createdAt: new Date(r.created_at), lastSeenAt: new Date(r.last_seen_at) }
}

function toPropertyDefinition(r: Record<string, any>): PropertyDefinition {
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    groupTypeIndex: r.group_type_index === -1 ? null : r.group_type_index,
    propertyType: r.property_type ?? null,
    createdAt: new Date(r.created_at),
    lastSeenAt: new Date(r.last_seen_at),
    isSeenOnFilteredEvents: r.is_seen ?? null,
  }
}

const likePattern = (word: string) => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** `d.name ILIKE` each word (all must match); a word no stored text can hold matches nothing. */
function searchWhere(words: readonly string[], param: (v: unknown) => string): string[] {
  return words.map((w) => (cannotBeStored(w) ? 'false' : `d.name ILIKE ${param(likePattern(w))}`))
}

/** Distinct by key, in key order (a stable lock order for concurrent writers). */
function distinctSorted<T>(rows: readonly T[], key: (row: T) => string): T[] {
  const byKey = new Map<string, T>()
  for (const r of rows) if (!byKey.has(key(r))) byKey.set(key(r), r)
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!)
}

/** DefinitionStore over any SqlClient (PGlite embedded, PostgreSQL at scale). */
export function createSqlDefinitionStore(db: SqlClient): DefinitionStore {
  return {
    async listEvents(projectId, query, page) {
      const params: unknown[] = [projectId]
      const param = (v: unknown) => `$${params.push(v)}`
      const where = ['d.project_id = $1', ...searchWhere(query.search, param)]
      if (query.eventType === 'event_custom') where.push("d.name NOT LIKE '$%'")
      if (query.eventType === 'event_posthog') where.push("d.name LIKE '$%'")
      return selectPage(db, {
        from: 'event_definitions d',
        select: 'SELECT d.id::text AS id, d.name, d.created_at, d.last_seen_at FROM event_definitions d',
        where: where.join(' AND '),
        params,
        orderBy: EVENT_ORDER[query.ordering],
        page,
        map: toEventDefinition,
      })
    },

    async getEvent(projectId, id) {
      if (!UUID.test(id)) return null
      const [row] = await db.query('SELECT id::text AS id, name, created_at, last_seen_at FROM event_definitions WHERE project_id = $1 AND id = $2', [projectId, id])
      return row ? toEventDefinition(row) : null
    },

    async listProperties(projectId, q, page) {
      const params: unknown[] = [projectId, q.type, q.groupTypeIndex ?? -1]
      const param = (v: unknown) => `$${params.push(v)}`
      const where = ['d.project_id = $1', 'd.type = $2', 'd.group_type_index = $3', ...searchWhere(q.search, param)]
      if (q.names !== null) where.push(`d.name = ANY(${param(q.names.map(toPgText))}::text[])`)
      if (q.isNumerical === true) where.push(`d.property_type = 'Numeric' AND NOT d.name = ANY(${param(NOT_NUMERICAL)}::text[])`)
      if (q.isFeatureFlag !== null) where.push(`d.name ${q.isFeatureFlag ? '' : 'NOT '}LIKE '$feature/%'`)
      if (q.excluded.length > 0) where.push(`NOT d.name = ANY(${param(q.excluded.map(toPgText))}::text[])`)
      if (q.type === 1) where.push(`NOT d.name = ANY(${param(ALWAYS_EXCLUDED_EVENT_PROPERTIES)}::text[])`)
      if (q.type === 1 && q.excludeCoreProperties) where.push(`d.name NOT LIKE '$%'`)
      let from = 'property_definitions d'
      let seen = 'NULL::boolean'
      if (q.eventNames !== null) {
        const join = q.filterByEventNames ? 'JOIN' : 'LEFT JOIN'
        from += ` ${join} (SELECT DISTINCT property FROM event_properties WHERE project_id = $1 AND event = ANY(${param(q.eventNames.map(toPgText))}::text[])) s ON s.property = d.name`
        seen = 's.property IS NOT NULL'
      }
      return selectPage(db, {
        from,
        select: `SELECT d.id::text AS id, d.name, d.type, d.group_type_index, d.property_type, d.created_at, d.last_seen_at, ${seen} AS is_seen FROM ${from}`,
        where: where.join(' AND '),
        params,
        orderBy: q.eventNames !== null ? `(${seen}) DESC, d.name ASC` : 'd.name ASC',
        page,
        map: toPropertyDefinition,
      })
    },

    async getProperty(projectId, id) {
      if (!UUID.test(id)) return null
      const [row] = await db.query(
        'SELECT id::text AS id, name, type, group_type_index, property_type, created_at, last_seen_at FROM property_definitions WHERE project_id = $1 AND id = $2',
        [projectId, id],
      )
      return row ? toPropertyDefinition(row) : null
    },

    async eventsWithProperty(projectId, eventNames, property) {
      const rows = await db.query<{ event: string }>(
        'SELECT event FROM event_properties WHERE project_id = $1 AND property = $2 AND event = ANY($3::text[])',
        [projectId, toPgText(property), eventNames.map(toPgText)],
      )
      return new Set(rows.map((r) => r.event))
    },

    async recordSeen(seen: SeenDefinitions, seenAt: Date) {
      const at = seenAt.toISOString()
      const events = distinctSorted(seen.events.map((e) => ({ ...e, name: toPgText(e.name) })), eventKey)
      if (events.length > 0) {
        await db.query(
          `INSERT INTO event_definitions (project_id, name, last_seen_at)
           SELECT t.project_id, t.name, $3 FROM unnest($1::int[], $2::text[]) AS t(project_id, name)
           ON CONFLICT (project_id, name) DO UPDATE SET last_seen_at = excluded.last_seen_at
           WHERE event_definitions.last_seen_at < excluded.last_seen_at`,
          [events.map((e) => e.projectId), events.map((e) => e.name), at],
        )
      }
      const props = distinctSorted(seen.properties.map((p) => ({ ...p, name: toPgText(p.name) })), propertyKey)
      if (props.length > 0) {
        await db.query(
          `INSERT INTO property_definitions (project_id, type, group_type_index, name, property_type, last_seen_at)
           SELECT t.project_id, t.type, t.group_type_index, t.name, t.property_type, $6
           FROM unnest($1::int[], $2::smallint[], $3::smallint[], $4::text[], $5::text[]) AS t(project_id, type, group_type_index, name, property_type)
           ON CONFLICT (project_id, type, group_type_index, name) DO UPDATE SET
             last_seen_at = greatest(property_definitions.last_seen_at, excluded.last_seen_at),
             property_type = coalesce(property_definitions.property_type, excluded.property_type)
           WHERE property_definitions.last_seen_at < excluded.last_seen_at
              OR (property_definitions.property_type IS NULL AND excluded.property_type IS NOT NULL)`,
          [props.map((p) => p.projectId), props.map((p) => p.type), props.map((p) => p.groupTypeIndex), props.map((p) => p.name), props.map((p) => p.propertyType), at],
        )
      }
      const pairs = distinctSorted(seen.eventProperties.map((e) => ({ ...e, event: toPgText(e.event), property: toPgText(e.property) })), eventPropertyKey)
      if (pairs.length > 0) {
        await db.query(
          `INSERT INTO event_properties (project_id, event, property)
           SELECT * FROM unnest($1::int[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
          [pairs.map((e) => e.projectId), pairs.map((e) => e.event), pairs.map((e) => e.property)],
        )
      }
    },
  }
}
