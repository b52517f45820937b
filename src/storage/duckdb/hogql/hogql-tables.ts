import { hogqlError } from '../../../domain/hogql/hogql-error.ts'
import type { SqlParams } from '../../event-sql/sql-params.ts'
import type { HType, Typed } from './hogql-sql-types.ts'

/** A table a SELECT reads: the project's events, or a subquery with its columns. */
export interface TableRef {
  /** The name HogQL code uses for it (its alias, or the table's name). */
  name: string
  /** Its alias in the SQL (ours, `t1`, `t2`..., never the client's text). */
  sqlAlias: string
  kind: 'events' | 'persons' | 'subquery'
  columns: Map<string, HType>
  /** Whether a field read the effective person id (the override join is added only then). */
  needsPerson: boolean
}

/** `SELECT *` on events, as PostHog's HogQL expands it. */
export const EVENTS_STAR = ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at'] as const

const EVENTS_FIELDS: Record<string, HType> = {
  uuid: 'string', event: 'string', distinct_id: 'string', properties: 'string', elements_chain: 'string', timestamp: 'datetime', created_at: 'datetime',
  person_id: 'string', person: 'unknown', $session_id: 'json', $window_id: 'json', $group_0: 'string', $group_1: 'string', $group_2: 'string', $group_3: 'string', $group_4: 'string',
}

export const eventsTable = (name: string, sqlAlias: string): TableRef => ({ name, sqlAlias, kind: 'events', columns: new Map(Object.entries(EVENTS_FIELDS)), needsPerson: false })

/** `SELECT *` on persons. */
export const PERSONS_STAR = ['id', 'created_at', 'properties'] as const
const PERSONS_FIELDS: Record<string, HType> = { id: 'string', created_at: 'datetime', properties: 'string' }

export const personsTable = (name: string, sqlAlias: string): TableRef => ({ name, sqlAlias, kind: 'persons', columns: new Map(Object.entries(PERSONS_FIELDS)), needsPerson: false })

/** A field of `persons`: `id`, `created_at`, `properties` and `properties.<key>`. */
export function personsField(table: TableRef, chain: readonly string[], params: SqlParams): Typed {
  const [head, ...rest] = chain
  const col = (c: string) => `${table.sqlAlias}.${c}`
  if (head === 'properties') {
    if (rest.length === 0) return { sql: col('properties'), type: 'string' }
    return { sql: `json_extract_string(${col('properties')}, ${jsonPointer(rest, params)})`, type: 'json' }
  }
  if (rest.length > 0) throw hogqlError(`Field "${chain.join('.')}" has no "${rest.join('.')}": only properties are nested.`)
  if (head === 'id') return { sql: `CAST(${col('id')} AS VARCHAR)`, type: 'string' }
  if (head === 'created_at') return { sql: col('created_at'), type: 'datetime' }
  throw hogqlError(`Unknown field "${chain.join('.')}" on persons: fields are ${PERSONS_STAR.join(', ')}.`)
}

/**
 * The project's persons as a relation of the events store: each person (after merges) with the
 * properties of the newest event stored for them, by storage time then event time (persons on
 * events: the persons step writes the person's properties on every event) and their first event's time as \`created_at\`. A person who
 * sent no event yet is not in it; the persons API reads the persons store itself.
 */
export function personsRelation(table: TableRef, projectParam: string): string {
  return (
    `(SELECT COALESCE(o.override_person_id, ev.person_id) AS id, min(ev.timestamp) AS created_at, ` +
    `COALESCE(arg_max(ev.person_properties, row(ev.created_at, ev.timestamp)), '{}') AS properties FROM events ev ` +
    `LEFT JOIN person_overrides o ON o.project_id = ev.project_id AND o.old_person_id = ev.person_id ` +
    `WHERE ev.project_id = ${projectParam} AND ev.person_id IS NOT NULL GROUP BY 1) AS ${table.sqlAlias}`
  )
}

/** A JSON pointer to a (nested) key, bound as a parameter. */
export function jsonPointer(keys: readonly string[], params: SqlParams): string {
  return params.add(`/${keys.map((k) => k.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`)
}

/**
 * The SQL of a field of the project's events: properties through JSON extraction with the key
 * bound, `person_id` as the effective person (the override applied), `person.properties.<key>` from
 * the event's person properties.
 */
export function eventsField(table: TableRef, chain: readonly string[], params: SqlParams): Typed {
  const col = (c: string) => `${table.sqlAlias}.${c}`
  const [head, ...rest] = chain
  const leaf = (t: Typed): Typed => {
    if (rest.length > 0) throw hogqlError(`Field "${chain.join('.')}" has no "${rest.join('.')}": only properties are nested.`)
    return t
  }
  switch (head) {
    case 'uuid':
      return leaf({ sql: `CAST(${col('uuid')} AS VARCHAR)`, type: 'string' })
    case 'event':
    case 'distinct_id':
    case 'elements_chain':
      return leaf({ sql: col(head), type: 'string' })
    case 'timestamp':
    case 'created_at':
      return leaf({ sql: col(head), type: 'datetime' })
    case 'properties':
      if (rest.length === 0) return { sql: col('properties'), type: 'string' }
      return { sql: `json_extract_string(${col('properties')}, ${jsonPointer(rest, params)})`, type: 'json' }
    case '$session_id':
    case '$window_id':
      return leaf({ sql: `json_extract_string(${col('properties')}, ${jsonPointer([head], params)})`, type: 'json' })
    case 'person_id':
      table.needsPerson = true
      return leaf({ sql: `CAST(${col('__person_id')} AS VARCHAR)`, type: 'string' })
    case 'person':
      return personField(table, chain, params)
  }
  const group = /^\$group_([0-4])$/.exec(head ?? '')
  if (group) return leaf({ sql: col(`group_${group[1]}`), type: 'string' })
  throw hogqlError(`Unknown field "${chain.join('.')}" on events: fields are ${Object.keys(EVENTS_FIELDS).join(', ')}.`)
}

function personField(table: TableRef, chain: readonly string[], params: SqlParams): Typed {
  const [, what, ...keys] = chain
  if ((what === 'id' || what === 'uuid') && keys.length === 0) {
    table.needsPerson = true
    return { sql: `CAST(${table.sqlAlias}.__person_id AS VARCHAR)`, type: 'string' }
  }
  if (what === 'properties') {
    if (keys.length === 0) return { sql: `COALESCE(${table.sqlAlias}.person_properties, '{}')`, type: 'string' }
    return { sql: `json_extract_string(${table.sqlAlias}.person_properties, ${jsonPointer(keys, params)})`, type: 'json' }
  }
  throw hogqlError(`Unknown field "${chain.join('.')}": the event's person has id and properties.<key>.`)
}

/** The project's events as a relation: the project filter is always here, whatever the query says. */
export function eventsRelation(table: TableRef, projectParam: string): string {
  const cols = 'uuid, event, distinct_id, properties, elements_chain, timestamp, created_at, person_properties, group_0, group_1, group_2, group_3, group_4'
  const alias = table.sqlAlias
  if (!table.needsPerson) return `(SELECT ${cols} FROM events WHERE project_id = ${projectParam}) AS ${alias}`
  const evCols = cols.split(', ').map((c) => `ev.${c}`).join(', ')
  return (
    `(SELECT ${evCols}, COALESCE(o.override_person_id, ev.person_id) AS __person_id FROM events ev ` +
    `LEFT JOIN person_overrides o ON o.project_id = ev.project_id AND o.old_person_id = ev.person_id ` +
    `WHERE ev.project_id = ${projectParam}) AS ${alias}`
  )
}
