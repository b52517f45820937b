import type { HogQLExpr } from '../../../domain/hogql/hogql-ast.ts'
import { hogqlError } from '../../../domain/hogql/hogql-error.ts'
import type { SqlParams } from '../sql-params.ts'
import type { HogQLDialect } from './hogql-dialect.ts'
import { SESSIONS, sessionOfEvent, withSessions } from './hogql-sessions.ts'
import type { HType, Typed } from './hogql-sql-types.ts'

/** A table a SELECT reads: one of HOGQL_TABLES, or a subquery with its columns. */
export interface TableRef {
  /** The name HogQL code uses for it (its alias, or the table's name). */
  name: string
  /** Its alias in the SQL (ours, `t1`, `t2`..., never the client's text). */
  sqlAlias: string
  /** The registered table it reads; undefined for a subquery. */
  table?: HogQLTable
  columns: Map<string, HType>
  /** Whether a field read the effective person id (the override join is added only then). */
  needsPerson: boolean
  /** The session columns its fields read (`sessions`, `events.session.*`): only those are computed. */
  sessionColumns: Set<string>
  /** `sessions`: where the partials read may start, from the query's bounds on `$start_timestamp` (all when absent). */
  sessionStart?: { from?: Date; to?: Date }
}

/** What a field or relation is written with. */
export interface TableContext {
  dialect: HogQLDialect
  params: SqlParams
  projectId: number
}

/**
 * A table HogQL queries may read. Each is a relation of the project's own rows (the project filter is
 * the table's, whatever the query says), its fields typed, `SELECT *` its `star` fields. A new table
 * (groups) is one more entry of HOGQL_TABLES.
 */
export interface HogQLTable {
  star: readonly string[]
  fields: Readonly<Record<string, HType>>
  /** Whether a bare field name (not in `fields`) belongs to this table, e.g. `$group_0` on events. */
  owns(name: string): boolean
  field(ref: TableRef, chain: readonly string[], c: TableContext): Typed
  relation(ref: TableRef, c: TableContext): string
  /**
   * Reads the WHERE of the SELECT the table is in (`only`: the one table of its FROM) before its
   * relation is written, to read less than all of it (a bound the WHERE keeps applying).
   */
  narrow?(ref: TableRef, where: HogQLExpr | null, only: boolean): void
}

const bagOf = (ref: TableRef, bag: 'properties' | 'person_properties', c: TableContext): Typed => ({
  sql: c.dialect.bagText(ref.sqlAlias, bag),
  type: 'string',
  bag: (keys) => ({ sql: c.dialect.property(ref.sqlAlias, bag, keys, c.params), type: 'json' }),
  bagHas: (keys) => c.dialect.propertyPresent(ref.sqlAlias, bag, keys, c.params),
})

function leafOf(chain: readonly string[]) {
  const [, ...rest] = chain
  return (t: Typed): Typed => {
    if (rest.length > 0) throw hogqlError(`Field "${chain.join('.')}" has no "${rest.join('.')}": only properties are nested.`)
    return t
  }
}

const EVENTS_FIELDS: Record<string, HType> = {
  uuid: 'string', event: 'string', distinct_id: 'string', properties: 'string', elements_chain: 'string', timestamp: 'datetime', created_at: 'datetime',
  person_id: 'string', person: 'unknown', session: 'unknown', $session_id: 'json', $window_id: 'json', $group_0: 'string', $group_1: 'string', $group_2: 'string', $group_3: 'string', $group_4: 'string',
}

/**
 * The project's events: properties by key (the engine's exact top-level lookup), `person_id` as the
 * effective person (the override applied), `person.properties.<key>` from the event's person properties.
 */
const EVENTS: HogQLTable = {
  // `SELECT *` on events, as PostHog's HogQL expands it.
  star: ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at'],
  fields: EVENTS_FIELDS,
  owns: (name) => name in EVENTS_FIELDS || /^\$group_[0-4]$/.test(name),
  field(ref, chain, c) {
    const col = (name: string) => `${ref.sqlAlias}.${name}`
    const [head, ...rest] = chain
    const leaf = leafOf(chain)
    switch (head) {
      case 'uuid':
        return leaf({ sql: c.dialect.idText(col('uuid')), type: 'string' })
      case 'event':
      case 'distinct_id':
      case 'elements_chain':
        return leaf({ sql: col(head), type: 'string' })
      case 'timestamp':
      case 'created_at':
        return leaf({ sql: col(head), type: 'datetime' })
      case 'properties': {
        const bag = bagOf(ref, 'properties', c)
        return rest.length === 0 ? bag : bag.bag!(rest)
      }
      case '$session_id':
      case '$window_id':
        return leaf(bagOf(ref, 'properties', c).bag!([head]))
      case 'person_id':
        ref.needsPerson = true
        return leaf({ sql: c.dialect.idText(col('__person_id')), type: 'string' })
      case 'person':
        return personOfEvent(ref, chain, c)
      case 'session':
        return sessionOfEvent(ref, chain, c)
    }
    const group = /^\$group_([0-4])$/.exec(head ?? '')
    if (group) return leaf({ sql: col(`group_${group[1]}`), type: 'string' })
    throw hogqlError(`Unknown field "${chain.join('.')}" on events: fields are ${Object.keys(EVENTS_FIELDS).join(', ')}.`)
  },
  relation: (ref, c) => withSessions((alias) => c.dialect.eventsRelation(alias, c.projectId, c.params, { person: ref.needsPerson }), ref, c),
}

function personOfEvent(ref: TableRef, chain: readonly string[], c: TableContext): Typed {
  const [, what, ...keys] = chain
  if ((what === 'id' || what === 'uuid') && keys.length === 0) {
    ref.needsPerson = true
    return { sql: c.dialect.idText(`${ref.sqlAlias}.__person_id`), type: 'string' }
  }
  if (what === 'properties') {
    const bag = bagOf(ref, 'person_properties', c)
    return keys.length === 0 ? bag : bag.bag!(keys)
  }
  throw hogqlError(`Unknown field "${chain.join('.')}": the event's person has id and properties.<key>.`)
}

const PERSONS_FIELDS: Record<string, HType> = { id: 'string', created_at: 'datetime', properties: 'string' }

/**
 * The project's persons as a relation of the events store: each person (after merges) with the
 * properties of the newest event stored for them, by storage time then event time (persons on
 * events: the persons step writes the person's properties on every event) and their first event's
 * time as `created_at`. A person who sent no event yet is not in it; the persons API reads the persons
 * store itself.
 */
const PERSONS: HogQLTable = {
  star: ['id', 'created_at', 'properties'],
  fields: PERSONS_FIELDS,
  owns: (name) => name in PERSONS_FIELDS,
  field(ref, chain, c) {
    const [head, ...rest] = chain
    if (head === 'properties') {
      const bag = bagOf(ref, 'person_properties', c)
      return rest.length === 0 ? bag : bag.bag!(rest)
    }
    const leaf = leafOf(chain)
    if (head === 'id') return leaf({ sql: c.dialect.idText(`${ref.sqlAlias}.id`), type: 'string' })
    if (head === 'created_at') return leaf({ sql: `${ref.sqlAlias}.created_at`, type: 'datetime' })
    throw hogqlError(`Unknown field "${chain.join('.')}" on persons: fields are ${Object.keys(PERSONS_FIELDS).join(', ')}.`)
  },
  relation: (ref, c) => c.dialect.personsRelation(ref.sqlAlias, c.projectId, c.params),
}

/** The tables HogQL reads, by name (a Map: `constructor` is no table). */
export const HOGQL_TABLES: ReadonlyMap<string, HogQLTable> = new Map([
  ['events', EVENTS],
  ['persons', PERSONS],
  ['sessions', SESSIONS],
])
