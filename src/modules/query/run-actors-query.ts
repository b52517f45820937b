import { actorsPagePlan, type ActorSet } from '../../domain/query/actors-plan.ts'
import { ACTOR_STATS, defaultActorOrder, periodColumnOf, readActorsQuery, type ActorColumn, type ActorOrder, type ActorsQuery, type ActorStat } from '../../domain/query/actors-query.ts'
import { col, fromPlan, type Plan } from '../../domain/query/query-plan.ts'
import { validationError } from '../../shared/errors.ts'
import { sortedDistinctIds, toPersonJson } from '../persons/person-json.ts'
import type { Person } from '../persons/person-types.ts'
import { actorSetOf } from './actor-sets.ts'
import type { ActorGroup, QueryContext, QueryNode, QueryResult } from './query-context.ts'

/** Actors that may be read and sorted in memory when the order or a search needs their details. */
const MAX_DETAIL_SORTED = 100_000

/** The statistics the event store gives one actor of the page. */
type ActorRow = { actor: string } & Partial<Record<ActorStat, unknown>>
type Details = Person | ActorGroup

/**
 * `ActorsQuery` over an insight (PostHog's `ActorsQueryRunner` with an `InsightActorsQuery` or
 * `FunnelsActorsQuery` source): the actor set is computed in the event store by the insight's own
 * plans; the page is ordered there when the order needs only event-side columns, otherwise (order
 * by `created_at` or name, or `search`) the set's details are read in batches and sorted here. Each
 * page's persons (or groups) are read from the metadata store in one set-based look-up.
 */
export async function runActorsQuery(ctx: QueryContext, node: QueryNode): Promise<QueryResult> {
  const q = readActorsQuery(node)
  const set = await actorSetOf(ctx, q.source, 'query.source')
  const isGroup = set.groupTypeIndex !== null
  const columns: ActorColumn[] = q.select ?? defaultColumns(set)
  checkColumns(columns, set, q.select ? 'query.select' : 'query')
  const order = q.orderBy === null ? defaultActorOrder(columns, 'query.orderBy') : q.orderBy
  for (const o of order) {
    if (isStat(o.key) && !set.stats.includes(o.key)) throw validationError(o.attr, `This insight's actors have no "${o.key === 'appearance_count' ? 'appearances' : o.key}" to order by.`, 'invalid_input')
  }
  const inMemory = q.search !== null || order.some((o) => o.key === 'created_at' || o.key === 'display')
  const { rows, details, hasMore } = inMemory ? await pageInMemory(ctx, set, q, order) : await pageInStore(ctx, set, q, order)
  const results = rows.map((r) => columns.map((c) => cell(c, r, details.get(r.actor))))
  return {
    results,
    columns,
    types: columns.map((c) => (periodColumnOf(c) ? 'UInt8' : TYPES[c as keyof typeof TYPES])),
    hasMore,
    limit: q.limit,
    offset: q.offset,
    missing_actors_count: rows.filter((r) => !details.has(r.actor)).length,
  }
}

/** PostHog's strategies' `input_columns`: persons (with the events' distinct ids for trends), or the group. */
function defaultColumns(set: ActorSet): ActorColumn[] {
  if (set.groupTypeIndex !== null) return ['group']
  return set.stats.includes('event_distinct_ids') ? ['person', 'id', 'person.$delete', 'event_distinct_ids'] : ['person', 'id', 'person.$delete']
}

const isStat = (key: string): key is ActorStat => (ACTOR_STATS as readonly string[]).includes(key)

/**
 * A column the source cannot give (an event statistic of a funnel's actors, a person column of
 * groups, a retention period column of another insight or past the look-ahead) is a 400.
 */
function checkColumns(columns: readonly ActorColumn[], set: ActorSet, attr: string) {
  const isGroup = set.groupTypeIndex !== null
  for (const [i, c] of columns.entries()) {
    const at = attr === 'query' ? 'query.select' : `${attr}.${i}`
    const period = periodColumnOf(c)
    if (period && !(set.periods && period.period === set.periods.name && period.index < set.periods.count)) {
      const offered = set.periods ? `${set.periods.name}_0 to ${set.periods.name}_${set.periods.count - 1}` : 'none'
      throw validationError(at, `This insight's actors have no "${c}" column (period columns: ${offered}).`, 'invalid_input')
    }
    if ((ACTOR_STATS as readonly string[]).includes(c) && !set.stats.includes(c as ActorStat)) throw validationError(at, `This insight's actors have no "${c}" column.`, 'invalid_input')
    if (isGroup && (c === 'person' || c === 'person.$delete')) throw validationError(at, `The actors are groups: "${c}" is not one of their columns (use "actor" or "group").`, 'invalid_input')
    if (!isGroup && c === 'group') throw validationError(at, 'The actors are persons: use "actor" or "person".', 'invalid_input')
  }
}

async function lookUp(ctx: QueryContext, set: ActorSet, ids: readonly string[]): Promise<Map<string, Details>> {
  if (set.groupTypeIndex !== null) return new Map((await ctx.groups(set.groupTypeIndex, ids)).map((g) => [g.key, g]))
  return new Map((await ctx.persons(ids)).map((p) => [p.uuid, p]))
}

async function pageInStore(ctx: QueryContext, set: ActorSet, q: ActorsQuery, order: readonly ActorOrder[]) {
  const all = (await ctx.run(actorsPagePlan(set, order, q))).rows as ActorRow[]
  const rows = all.slice(0, q.limit).map((r) => ({ ...r, actor: String(r.actor) }))
  return { rows, details: await lookUp(ctx, set, rows.map((r) => r.actor)), hasMore: all.length > q.limit }
}

async function pageInMemory(ctx: QueryContext, set: ActorSet, q: ActorsQuery, order: readonly ActorOrder[]) {
  const plan: Plan = { source: fromPlan(set.plan), select: ['actor', ...set.stats].map((name) => ({ alias: name, expr: col(name) })), limit: MAX_DETAIL_SORTED + 1 }
  const every = ((await ctx.run(plan)).rows as ActorRow[]).map((r) => ({ ...r, actor: String(r.actor) }))
  if (every.length > MAX_DETAIL_SORTED) {
    const attr = q.search !== null ? 'query.search' : order.find((o) => o.key === 'created_at' || o.key === 'display')!.attr
    throw validationError(attr, `More than ${MAX_DETAIL_SORTED} actors: too many to search or order by person fields; order by event_count or id instead.`, 'invalid_input')
  }
  const details = await lookUp(ctx, set, every.map((r) => r.actor))
  const search = q.search?.toLowerCase() ?? null
  const kept = search === null ? every : every.filter((r) => matchesSearch(r.actor, details.get(r.actor), search))
  kept.sort(compareBy(order, details))
  return { rows: kept.slice(q.offset, q.offset + q.limit), details, hasMore: kept.length > q.offset + q.limit }
}

/** PostHog's person search (email or name property, id, a distinct id contains it) and group search (name property or key). */
function matchesSearch(id: string, d: Details | undefined, search: string): boolean {
  const has = (v: unknown) => v !== undefined && v !== null && String(v).toLowerCase().includes(search)
  if (has(id)) return true
  if (!d) return false
  if ('uuid' in d) return has(d.properties.email) || has(d.properties.name) || d.distinctIds.some(has)
  return has(d.properties.name)
}

/** The order's keys, then the actor id ascending; missing values last (ClickHouse's NULLS LAST). */
function compareBy(order: readonly ActorOrder[], details: ReadonlyMap<string, Details>) {
  const value = (r: ActorRow, key: ActorOrder['key']): string | number | null => {
    const d = details.get(r.actor)
    switch (key) {
      case 'actor_id':
        return r.actor
      case 'created_at':
        return d ? d.createdAt.getTime() : null
      case 'display': {
        // PostHog orders persons by their email property (the display-name setting's first), groups by name.
        const v = d ? ('uuid' in d ? d.properties.email : d.properties.name) : undefined
        return v === undefined || v === null ? null : String(v)
      }
      default: {
        const v = r[key]
        return v === undefined || v === null ? null : v instanceof Date ? v.getTime() : typeof v === 'number' ? v : String(v)
      }
    }
  }
  return (a: ActorRow, b: ActorRow): number => {
    for (const o of [...order, { key: 'actor_id' as const, desc: false, attr: '' }]) {
      const x = value(a, o.key)
      const y = value(b, o.key)
      if (x === y) continue
      if (x === null) return 1
      if (y === null) return -1
      const c = x < y ? -1 : 1
      return o.desc ? -c : c
    }
    return 0
  }
}

const TYPES: Record<Exclude<ActorColumn, `${string}_${number}`> | 'appearances', string> = {
  actor: 'Tuple', person: 'Tuple', group: 'Tuple', id: 'UUID', 'person.$delete': 'UInt8', created_at: "DateTime64(6, 'UTC')",
  event_count: 'UInt64', event_distinct_ids: 'Array(String)', last_seen: "DateTime64(6, 'UTC')", matched_recordings: 'Array(Tuple)',
  appearances: 'Array(Int64)',
}

/** One cell of a row, as PostHog's runner fills it: the actor column is the person (or group) object, `{id}` when it is gone. */
function cell(c: ActorColumn, r: ActorRow, d: Details | undefined): unknown {
  const period = periodColumnOf(c)
  // PostHog's `arrayExists(x -> x = i, appearance_intervals)`: ClickHouse's UInt8.
  if (period) return appearancesOf(r).includes(period.index) ? 1 : 0
  switch (c) {
    case 'actor':
    case 'person':
    case 'group':
      if (!d) return { id: r.actor }
      return 'uuid' in d ? toPersonJson(d) : groupJson(d)
    case 'id':
      return r.actor
    case 'person.$delete':
      return 1
    case 'created_at':
      return d ? d.createdAt.toISOString() : null
    case 'event_distinct_ids':
      return Array.isArray(r.event_distinct_ids) ? sortedDistinctIds(r.event_distinct_ids.map(String)) : []
    case 'last_seen':
      return r.last_seen instanceof Date ? r.last_seen.toISOString() : (r.last_seen ?? null)
    case 'event_count':
      return Number(r.event_count ?? 0)
    case 'matched_recordings':
      // Tally keeps no session recordings.
      return []
    case 'appearances':
      return appearancesOf(r)
  }
}

const appearancesOf = (r: ActorRow): number[] => (Array.isArray(r.appearances) ? r.appearances.map(Number) : [])

/** A group as PostHog's `GroupStrategy.get_actors` returns it. */
function groupJson(g: ActorGroup) {
  return { id: g.key, type: 'group', properties: g.properties, group_key: g.key, group_type_index: g.typeIndex, group_properties: g.properties, created_at: g.createdAt.toISOString() }
}
