import { validationError } from '../../shared/errors.ts'
import { readArray, readInteger, readNode, readText, type Node } from './query-fields.ts'
import { BREAKDOWN_PART_SEPARATOR } from './trends-query.ts'

/**
 * PostHog's `ActorsQuery` (`actors_query_runner.py`): who is behind a number of an insight. Its
 * `source` (an `InsightActorsQuery` or `FunnelsActorsQuery`) names the actors; `select` the columns
 * shown for each, `orderBy`, `limit`/`offset` and `search` the page.
 */
export interface ActorsQuery {
  /** The columns as the client named them; null: the strategy's defaults (PostHog's `input_columns`). */
  select: ActorColumn[] | null
  /** null: PostHog's default order (by the columns); `[]`: none asked (by actor id, for a stable page). */
  orderBy: ActorOrder[] | null
  limit: number
  offset: number
  /** PostHog's `search`: email/name property, id or a distinct id contains it (any case); groups: name or key. */
  search: string | null
  source: Node
}

/** Columns an actors query can show. Event-side statistics exist only for sources that count events. */
export const ACTOR_COLUMNS = ['actor', 'person', 'group', 'id', 'person.$delete', 'created_at', 'event_count', 'event_distinct_ids', 'last_seen', 'matched_recordings', 'appearances'] as const
/**
 * A retention actor's flag for one period after its cohort's (PostHog's `<interval>_<i>` columns,
 * `day_0`...`day_7`, as its retention table asks them): whether `appearances` holds i.
 */
export type PeriodColumn = `${'hour' | 'day' | 'week' | 'month'}_${number}`
export type ActorColumn = (typeof ACTOR_COLUMNS)[number] | PeriodColumn
const PERIOD_COLUMN = /^(hour|day|week|month)_(\d{1,2})$/
/** The period name and index of a period column (`day_3`), or null. */
export function periodColumnOf(c: string): { period: string; index: number } | null {
  const m = PERIOD_COLUMN.exec(c)
  return m ? { period: m[1]!, index: Number(m[2]) } : null
}
/**
 * Statistics the event store computes per actor (a source offers some of them): events' counts and
 * times for trends, the periods a retention actor appears in (`appearance_count` their number).
 */
export type ActorStat = 'event_count' | 'last_seen' | 'event_distinct_ids' | 'appearances' | 'appearance_count'
export const ACTOR_STATS: readonly ActorStat[] = ['event_count', 'last_seen', 'event_distinct_ids', 'appearances', 'appearance_count']

/** What a page can be ordered by: an event-side statistic, the actor's id, its creation time or display name. */
export type OrderKey = 'event_count' | 'last_seen' | 'appearance_count' | 'actor_id' | 'created_at' | 'display'
export interface ActorOrder {
  key: OrderKey
  desc: boolean
  /** Where it was asked (`query.orderBy.0`), for errors. */
  attr: string
}

const ORDER_NAMES: Record<string, OrderKey> = {
  event_count: 'event_count', last_seen: 'last_seen', actor_id: 'actor_id', id: 'actor_id', person_id: 'actor_id', key: 'actor_id',
  created_at: 'created_at', person: 'display', actor: 'display', group: 'display',
  // PostHog's retention table orders by `length(appearances) DESC`.
  'length(appearances)': 'appearance_count',
}

/** Reads an `ActorsQuery` node; errors name the field under `query.`. */
export function readActorsQuery(node: Node, attr = 'query'): ActorsQuery {
  const select = node.select === undefined || node.select === null ? null : readArray(node.select, `${attr}.select`).map((c, i) => readColumn(c, `${attr}.select.${i}`))
  if (select && select.length === 0) throw validationError(`${attr}.select`, 'At least one column is required.', 'required')
  const orderBy = node.orderBy === undefined || node.orderBy === null ? null : readArray(node.orderBy, `${attr}.orderBy`).flatMap((o, i) => readOrder(o, `${attr}.orderBy.${i}`))
  for (const key of ['properties', 'fixedProperties'] as const) {
    const v = node[key]
    if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)) {
      throw validationError(`${attr}.${key}`, `Filtering an actors query by "${key}" is not supported yet.`, 'invalid_input')
    }
  }
  const search = readText(node.search, `${attr}.search`, { optional: true, nullable: true })
  return {
    select,
    orderBy,
    limit: readInteger(node.limit, `${attr}.limit`, { min: 1, max: 50_000, fallback: 100 })!,
    offset: readInteger(node.offset, `${attr}.offset`, { min: 0, fallback: 0 })!,
    search: search ? search : null,
    source: readNode(node.source, `${attr}.source`),
  }
}

function readColumn(v: unknown, attr: string): ActorColumn {
  const text = readText(v, attr)!.trim()
  if (!(ACTOR_COLUMNS as readonly string[]).includes(text) && !periodColumnOf(text)) {
    throw validationError(attr, `Column "${text}" is not supported in an actors query (supported: ${ACTOR_COLUMNS.join(', ')}, and a retention's day_0, day_1...).`, 'invalid_input')
  }
  return text as ActorColumn
}

/** One `orderBy` entry: HogQL order terms, possibly several separated by commas (`"event_count DESC, actor_id DESC"`). */
function readOrder(v: unknown, attr: string): ActorOrder[] {
  const text = readText(v, attr)!
  return text.split(',').map((term) => {
    const m = /^\s*([A-Za-z_$][\w.$]*|length\(\s*appearances\s*\))\s*(?:\s(ASC|DESC))?\s*$/i.exec(term)
    const key = m ? ORDER_NAMES[m[1]!.replace(/\s+/g, '')] : undefined
    if (!m || !key) throw validationError(attr, `Cannot order an actors query by "${term.trim()}" (by: ${Object.keys(ORDER_NAMES).join(', ')}, ASC or DESC).`, 'invalid_input')
    return { key, desc: (m[2] ?? '').toUpperCase() === 'DESC', attr }
  })
}

/**
 * PostHog's default order when the query names none (`actors_query_runner.py`): `created_at` DESC
 * when selected, else the first column ascending (the actor column orders by its id).
 */
export function defaultActorOrder(columns: readonly ActorColumn[], attr: string): ActorOrder[] {
  if (columns.includes('created_at')) return [{ key: 'created_at', desc: true, attr }]
  const first = columns[0]
  if (first === 'event_count' || first === 'last_seen') return [{ key: first, desc: false, attr }]
  return [{ key: 'actor_id', desc: false, attr }]
}

/**
 * A breakdown value as a client sends it (`breakdown`, `funnelStepBreakdown`): text, a number, or
 * the result's list of parts (one for a single breakdown), as the breakdown expression writes it.
 */
export function readBreakdownValue(v: unknown, attr: string): string {
  if (typeof v === 'string') return v
  if (typeof v === 'number' && Number.isFinite(v)) return String(v)
  if (Array.isArray(v) && v.length > 0 && v.every((p) => typeof p === 'string' || typeof p === 'number')) return v.map(String).join(BREAKDOWN_PART_SEPARATOR)
  throw validationError(attr, 'A breakdown value (text, a number or a list of them) is required.', 'invalid')
}
