import { validationError } from '../../shared/errors.ts'
import { readArray, readInteger, readNode, readText, type Node } from './query-fields.ts'
import { hogqlWhereExpr } from './hogql-where.ts'
import { col, type Expr } from './query-plan.ts'
import { lookupTable } from '../../shared/lookup-table.ts'

/** A column of an EventsQuery: what the client asked for and how it is computed. */
export type EventsColumn =
  | { kind: 'star'; text: string }
  | { kind: 'person'; text: string }
  | { kind: 'expr'; text: string; expr: Expr; aggregate: boolean; type: string }

export interface EventsQuery {
  select: EventsColumn[]
  event: string | null
  actionId: number | null
  personId: string | null
  properties: unknown[]
  /** HogQL `where` entries, each a row filter (AND-ed). */
  where: Expr[]
  after: string | null
  before: string | null
  orderBy: Array<{ column: EventsColumn; desc: boolean }>
  limit: number
  offset: number
}

/** Columns of the events table a select may name, with PostHog's HogQL type names. */
const EVENT_FIELDS = lookupTable<string>({
  uuid: 'UUID', event: 'String', distinct_id: 'String', timestamp: "DateTime64(6, 'UTC')", created_at: "DateTime64(6, 'UTC')",
  elements_chain: 'String', properties: 'String',
})
const PROPERTY = /^(person\.)?properties\.(?:([A-Za-z_$][\w$]*)|`([^`]+)`|"([^"]+)")$/
const AGGREGATES = lookupTable<Expr>({
  'count()': { op: 'aggregate', fn: 'count' },
  'count(*)': { op: 'aggregate', fn: 'count' },
  'uniq(distinct_id)': { op: 'aggregate', fn: 'uniq', arg: col('distinct_id') },
  'uniq(person_id)': { op: 'aggregate', fn: 'uniq', arg: { op: 'person_id' } },
  'count(distinct person_id)': { op: 'aggregate', fn: 'uniq', arg: { op: 'person_id' } },
  'min(timestamp)': { op: 'aggregate', fn: 'min', arg: col('timestamp') },
  'max(timestamp)': { op: 'aggregate', fn: 'max', arg: col('timestamp') },
})

/**
 * One select entry. EventsQuery's select is HogQL text; this reader takes the forms PostHog's events
 * table sends (`*`, `event`, `person`, `timestamp`, `properties.$browser`, `person.properties.email`,
 * `count()`, `uniq(...)`) and refuses anything else with a 400 naming the entry.
 */
export function readEventsColumn(v: unknown, attr: string): EventsColumn {
  const text = readText(v, attr)!.trim()
  const key = text.replace(/\s+/g, ' ').toLowerCase()
  if (text === '*') return { kind: 'star', text }
  if (text === 'person' || text === 'person_display_name -- Person') return { kind: 'person', text }
  if (text === 'person_id') return { kind: 'expr', text, expr: { op: 'to_text', arg: { op: 'person_id' } }, aggregate: false, type: 'UUID' }
  if (EVENT_FIELDS[text]) return { kind: 'expr', text, expr: text === 'uuid' ? { op: 'to_text', arg: col('uuid') } : col(text), aggregate: false, type: EVENT_FIELDS[text]! }
  if (AGGREGATES[key]) return { kind: 'expr', text, expr: AGGREGATES[key]!, aggregate: true, type: 'UInt64' }
  const m = PROPERTY.exec(text)
  if (m) {
    const name = m[2] ?? m[3] ?? m[4]!
    return { kind: 'expr', text, expr: { op: 'property', source: m[1] ? 'person' : 'event', key: name }, aggregate: false, type: 'String' }
  }
  throw validationError(attr, `Unsupported select expression "${text}": use *, event, person, timestamp, distinct_id, properties.<key>, person.properties.<key>, count() or uniq(...), or a HogQLQuery.`, 'invalid_input')
}

/** Reads an `EventsQuery` node. */
export function readEventsQuery(node: Node, attr = 'query'): EventsQuery {
  const select = readArray(node.select, `${attr}.select`).map((s, i) => readEventsColumn(s, `${attr}.select.${i}`))
  if (select.length === 0) throw validationError(`${attr}.select`, 'At least one column is required.', 'required')
  const where = readArray(node.where, `${attr}.where`, { optional: true }).map((w, i) => hogqlWhereExpr(readText(w, `${attr}.where.${i}`)!, `${attr}.where.${i}`))
  const orderBy = readArray(node.orderBy, `${attr}.orderBy`, { optional: true }).map((o, i) => {
    const text = readText(o, `${attr}.orderBy.${i}`)!.trim()
    const m = /^(.*?)(?:\s+(ASC|DESC))?$/i.exec(text)!
    const column = select.find((c) => c.text === m[1]!.trim()) ?? readEventsColumn(m[1], `${attr}.orderBy.${i}`)
    if (column.kind !== 'expr') throw validationError(`${attr}.orderBy.${i}`, `Cannot order by "${text}".`, 'invalid_input')
    return { column, desc: (m[2] ?? 'ASC').toUpperCase() === 'DESC' }
  })
  const properties = [...readArray(node.properties, `${attr}.properties`, { optional: true }), ...readArray(node.fixedProperties, `${attr}.fixedProperties`, { optional: true })]
  readNode(node.source, `${attr}.source`, { optional: true })
  return {
    select,
    event: readText(node.event, `${attr}.event`, { nullable: true }) ?? null,
    actionId: readInteger(node.actionId, `${attr}.actionId`, { min: 1 }) ?? null,
    personId: readText(node.personId, `${attr}.personId`, { nullable: true }) ?? null,
    properties,
    where,
    after: readText(node.after, `${attr}.after`, { nullable: true }) ?? null,
    before: readText(node.before, `${attr}.before`, { nullable: true }) ?? null,
    orderBy,
    limit: readInteger(node.limit, `${attr}.limit`, { min: 1, max: 50_000, fallback: 100 })!,
    offset: readInteger(node.offset, `${attr}.offset`, { min: 0, fallback: 0 })!,
  }
}

/** The event fields `*` stands for, selected one by one and assembled into PostHog's object. */
export const STAR_FIELDS = ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at'] as const
