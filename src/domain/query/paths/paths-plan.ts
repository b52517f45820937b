import type { ResolvedRange } from '../date-range.ts'
import { and, bin, col, fromPlan, keep, lit, notNull, timeBetween, when, type Expr, type Plan, type SequenceStep } from '../query-plan.ts'
import type { PathCleaningRule, PathsQuery } from './paths-query.ts'

/** PostHog splits a person's events into sessions at a gap of 30 minutes or more (`SESSION_TIME_THRESHOLD_DEFAULT_SECONDS`). */
export const SESSION_GAP_MS = 30 * 60 * 1000

/** A paths query resolved against the project: its range, all cleaning rules in order, and its event filters. */
export interface PathsSpec {
  q: PathsQuery
  range: ResolvedRange
  /** The project's rules (when `pathReplacements`) then the query's own, applied one after another. */
  cleaning: PathCleaningRule[]
  /** Property and test-account filters on the events. */
  filters: Expr | undefined
}

const is = (name: string, value: string): Expr => bin('=', col(name), lit(value))
const prop = (key: string): Expr => ({ op: 'property', source: 'event', key })
const isNull = (arg: Expr): Expr => ({ op: 'is_null', arg })
const or = (...args: Expr[]): Expr => ({ op: 'or', args })
const minus = (a: Expr, b: Expr): Expr => bin('-', a, b)
const plus = (a: Expr, b: Expr): Expr => bin('+', a, b)

/** Whether PostHog's runner reads this event type's own item (`_should_query_event`). */
function readsType(q: PathsQuery, event: string): boolean {
  if (q.includeEventTypes.length === 0) return !q.excludeEvents.includes(event)
  return (q.includeEventTypes as string[]).includes(event)
}

/** A grouping as a regex (PostHog: `re.escape`, then `*` matches anything), found anywhere in the item. */
export function groupingPattern(grouping: string): string {
  return grouping.replace(/[\\^$.|?*+()[\]{}\-/]/g, (c) => `\\${c}`).replace(/\\\*/g, '.*')
}

/**
 * An event's path item (PostHog's `path_item`): the URL of a page view with one trailing slash
 * removed, the screen name of a `$screen`, else the event's name; '' when missing; then each
 * cleaning rule in turn, then the first grouping the item matches in place of the item.
 */
export function pathItemExpr(spec: PathsSpec): Expr {
  const { q } = spec
  let item: Expr = col('event')
  if (readsType(q, '$pageview')) {
    const url: Expr = { op: 'regex_replace', arg: { op: 'coalesce', args: [prop('$current_url'), lit('')] }, pattern: '(.)/$', replacement: '\\1' }
    item = { op: 'case', when: [[is('event', '$pageview'), url]], else: item }
  }
  if (readsType(q, '$screen')) item = { op: 'case', when: [[is('event', '$screen'), prop('$screen_name')]], else: item }
  item = { op: 'coalesce', args: [item, lit('')] }
  for (const rule of spec.cleaning) item = { op: 'regex_replace', arg: item, pattern: rule.regex, replacement: rule.alias }
  if (q.pathGroupings.length === 0) return item
  return { op: 'case', when: q.pathGroupings.map((g): [Expr, Expr] => [{ op: 'regex_match', arg: item, pattern: groupingPattern(g) }, lit(g)]), else: item }
}

/**
 * The events paths read: `{person, ts (epoch ms), uid, item}` in the range, of the chosen types, filtered.
 * `uid` (the uuid, as the engine orders it) only breaks ties of one person's events at the same
 * millisecond, which PostHog leaves in no defined order; sorting the uuid itself, not its text, cost
 * ~18% less CPU on 1M events (DuckDB's text and UUID orders agree; ClickHouse's UUID order is its own).
 */
export function pathEventsPlan(spec: PathsSpec): Plan {
  const { q } = spec
  const item = pathItemExpr(spec)
  const types: Expr[] = q.includeEventTypes.flatMap((t): Expr[] => {
    if (t === '$pageview' || t === '$screen') return [is('event', t)]
    if (t === 'custom_event') return [{ op: 'not', arg: { op: 'regex_match', arg: col('event'), pattern: '^\\$' } }]
    return []
  })
  // PostHog applies `excludeEvents` in the WHERE only beside `includeEventTypes` (`_get_event_query`).
  const exclude = q.includeEventTypes.length > 0 && q.excludeEvents.length > 0 ? { op: 'not', arg: { op: 'in', arg: item, values: q.excludeEvents } } as Expr : undefined
  return {
    source: { kind: 'events' },
    select: [
      { alias: 'person', expr: { op: 'person_id' } },
      { alias: 'ts', expr: { op: 'epoch_ms', arg: col('timestamp') } },
      { alias: 'uid', expr: col('uuid') },
      { alias: 'item', expr: item },
    ],
    where: and(timeBetween(spec.range.from, spec.range.to), notNull({ op: 'person_id' }), types.length ? or(...types) : undefined, exclude, spec.filters),
  }
}

/** PostHog strips one trailing slash from the single target point (`paths_per_person_query`). */
const stripSlash = (p: string): string => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p)

/** PostHog compares each item with the next one of its session ('' after the last): an item equal to it is dropped. */
function notRepeated(gap: Expr): Expr {
  return bin('!=', col('item'), when(and(notNull(col('next_ts')), bin('<', minus(col('next_ts'), col('ts')), gap))!, col('next_item'), lit('')))
}

/**
 * What a reader of the path steps needs: `last` (the edges do not read it; without a start or end
 * point it costs ten more columns per row), and the rows at position 1 (the edges read only steps
 * with one before them). Either may be left in when not wanted.
 */
export interface StepsWanted {
  last: boolean
  first: boolean
}

/**
 * Each person's sessions as PostHog's runner cuts them: sessions at 30-minute gaps, repeats of the
 * same item in a row kept once (the last of them, with its time), cut to the start / end point and
 * the step limit. Rows `{person, pos (1-based position on the path), item, ts, prev_item, prev_ts (of
 * the item before on the path; NULL at pos 1), last (pos of the path's last item)}` (and `session`,
 * a key of the person's session, with a start or end point). What the reader does not want may be
 * left out (see `StepsWanted`).
 */
export function pathStepsPlan(spec: PathsSpec, opts: StepsWanted = { last: true, first: true }): Plan {
  const { q } = spec
  if (q.startPoint === null && q.endPoint === null) return firstStepsPlan(spec, opts)
  const limit = q.stepLimit
  const gap = lit(SESSION_GAP_MS)
  // 1. Per person in time order: sessions, and whether the next event of the session repeats the item.
  const raw: Plan = {
    source: {
      kind: 'sequence',
      plan: pathEventsPlan(spec),
      partitionBy: ['person'],
      orderBy: ['ts', 'uid'],
      steps: [
        { alias: 'prev_ts', fn: 'lag', arg: col('ts') },
        { alias: 'next_ts', fn: 'lead', arg: col('ts') },
        { alias: 'next_item', fn: 'lead', arg: col('item') },
        { alias: 'session', fn: 'running_sum', arg: when(or(isNull(col('prev_ts')), bin('>=', minus(col('ts'), col('prev_ts')), gap)), lit(1), lit(0)) },
      ],
    },
    select: keep(['person', 'session', 'ts', 'uid', 'item']),
    where: notRepeated(gap),
  }
  // 2. Per session: positions, the item before, and where the start / end point first occur.
  const firstAt = (value: string, also?: Expr): Expr => when(and(is('item', value), also)!, col('idx'))
  const h = Math.floor(limit / 2)
  const steps: SequenceStep[] = [
    { alias: 'idx', fn: 'row_number' },
    { alias: 'p_item', fn: 'lag', arg: col('item') },
    { alias: 'p_ts', fn: 'lag', arg: col('ts') },
    { alias: 'len', fn: 'partition_count' },
  ]
  const both = q.startPoint !== null && q.endPoint !== null
  if (both) {
    steps.push({ alias: 's', fn: 'partition_min', arg: firstAt(q.startPoint!) })
    steps.push({ alias: 'e', fn: 'partition_min', arg: firstAt(q.endPoint!, bin('>=', col('idx'), col('s'))) })
    steps.push({ alias: 'mid_ts', fn: 'partition_max', arg: when(bin('=', col('idx'), plus(col('s'), lit(h))), col('ts')) })
  } else if (q.startPoint !== null || q.endPoint !== null) {
    steps.push({ alias: 's', fn: 'partition_min', arg: firstAt(stripSlash((q.endPoint ?? q.startPoint)!)) })
  }
  const perSession: Plan = { source: { kind: 'sequence', plan: raw, partitionBy: ['person', 'session'], orderBy: ['ts', 'uid'], steps }, select: keep(['person', 'session', 'item', 'ts', 'idx', 'p_item', 'p_ts', 'len', ...steps.slice(4).map((s) => s.alias)]) }
  // 3. The rows kept on the path, with their position.
  const idx = col('idx')
  const s = col('s')
  const base = keep(['person', 'session', 'ts'])
  const pathRow = (where: Expr | undefined, pos: Expr, last: Expr, item: Expr = col('item'), prevItem: Expr = col('p_item'), prevTs: Expr = col('p_ts')): Plan => ({
    source: fromPlan(perSession),
    select: [...base, { alias: 'pos', expr: pos }, { alias: 'item', expr: item }, { alias: 'prev_item', expr: prevItem }, { alias: 'prev_ts', expr: prevTs }, { alias: 'last', expr: last }],
    where,
  })
  const least = (a: Expr, b: Expr): Expr => when(bin('<', a, b), a, b)
  if (!both && q.startPoint !== null) {
    return pathRow(and(notNull(s), bin('>=', idx, s), bin('<', idx, plus(s, lit(limit)))), plus(minus(idx, s), lit(1)), least(plus(minus(col('len'), s), lit(1)), lit(limit)))
  }
  if (!both && q.endPoint !== null) {
    const skipped = when(bin('>', s, lit(limit)), minus(s, lit(limit)), lit(0))
    return pathRow(and(notNull(s), bin('<=', idx, s), bin('>', idx, minus(s, lit(limit)))), minus(idx, skipped), least(s, lit(limit)))
  }
  // Start and end: the path from the start point to the end point after it; a longer one keeps its
  // first and last `h` items with '...' between (at the time of the item it stands for), as PostHog.
  const L = plus(minus(col('e'), s), lit(1))
  const f = plus(minus(idx, s), lit(1))
  const cut = bin('>', L, lit(limit))
  return pathRow(
    and(notNull(s), notNull(col('e')), bin('>=', idx, s), bin('<=', idx, col('e')), or({ op: 'not', arg: cut }, bin('<=', f, lit(h + 1)), bin('>=', f, plus(minus(L, lit(h)), lit(1)))))!,
    when(or({ op: 'not', arg: cut }, bin('<=', f, lit(h + 1))), f, minus(f, minus(L, lit(2 * h + 1)))),
    when(cut, lit(2 * h + 1), L),
    when(and(cut, bin('=', f, lit(h + 1)))!, lit('...'), col('item')),
    when(and(cut, bin('=', f, plus(minus(L, lit(h)), lit(1))))!, lit('...'), col('p_item')),
    when(and(cut, bin('=', f, plus(minus(L, lit(h)), lit(1))))!, col('mid_ts'), col('p_ts')),
  )
}

/**
 * Without a start or end point (each session's first `stepLimit` items) as one sequence of a
 * person's events: DuckDB sorts them twice (a window level before the first filter, one after),
 * ClickHouse once (one array program per person, PostHog's own shape). First the rows after which a
 * session ends (`ends`: the next event is 30 minutes or more later, or there is none) and the items
 * that are not repeats (`is_item`); only those and the dropped rows that end a session stay (an empty
 * item last in its session: a repeat never ends one, its next event being within the gap). Over
 * those rows an item's position in its session is its position in the run of rows after the last
 * that ended one (`run_position`, NULL past the limit), and with `last`, the items after it in its
 * session, as far as the limit needs them, the distance to the next row that ends one, less that
 * row when it is not an item (leads).
 */
function firstStepsPlan(spec: PathsSpec, { last: withLast, first: withFirst }: StepsWanted): Plan {
  const limit = spec.q.stepLimit
  const gap = lit(SESSION_GAP_MS)
  const ends = or(isNull(col('next_ts')), bin('>=', minus(col('next_ts'), col('ts')), gap))
  const is1 = (e: Expr): Expr => bin('=', e, lit(1))
  const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1)
  const shifted = (fn: 'lag' | 'lead', prefix: string, column: string) => upTo(limit).map((j): SequenceStep => ({ alias: `${prefix}${j}`, fn, arg: col(column), offset: j }))
  const map = (alias: string, arg: Expr): SequenceStep => ({ alias, fn: 'map', arg })
  // Items after this one in its session (`limit` standing for that many or more).
  const rest: Expr = { op: 'case', when: [[is1(col('ends')), lit(0)], ...upTo(limit).map((j): [Expr, Expr] => [is1(col(`a${j}`)), plus(lit(j - 1), col(`c${j}`))])], else: lit(limit) }
  const steps: SequenceStep[] = [
    { alias: 'next_ts', fn: 'lead', arg: col('ts') },
    { alias: 'next_item', fn: 'lead', arg: col('item') },
    map('ends', when(ends, lit(1), lit(0))),
    map('is_item', when(notRepeated(gap), lit(1), lit(0))),
    { alias: 'kept', fn: 'filter', arg: or(is1(col('is_item')), is1(col('ends'))) },
    { alias: 'idx', fn: 'run_position', arg: is1(col('ends')), upTo: limit },
    ...(withLast ? [...shifted('lead', 'a', 'ends'), ...shifted('lead', 'c', 'is_item')] : []),
    { alias: 'p_item', fn: 'lag', arg: col('item') },
    { alias: 'p_ts', fn: 'lag', arg: col('ts') },
    ...(withLast ? [map('rest', rest)] : []),
    { alias: 'on_path', fn: 'filter', arg: and(is1(col('is_item')), withFirst ? notNull(col('idx')) : bin('>=', col('idx'), lit(2)))! },
  ]
  const positioned: Plan = {
    source: { kind: 'sequence', plan: pathEventsPlan(spec), partitionBy: ['person'], orderBy: ['ts', 'uid'], steps },
    select: keep(['person', 'ts', 'item', 'p_item', 'p_ts', 'idx', ...(withLast ? ['rest'] : [])]),
  }
  const first = bin('=', col('idx'), lit(1))
  const length = plus(col('idx'), col('rest'))
  return {
    source: fromPlan(positioned),
    select: [
      ...keep(['person', 'ts']),
      { alias: 'pos', expr: col('idx') },
      { alias: 'item', expr: col('item') },
      { alias: 'prev_item', expr: when(first, lit(null), col('p_item')) },
      { alias: 'prev_ts', expr: when(first, lit(null), col('p_ts')) },
      ...(withLast ? [{ alias: 'last', expr: when(bin('<', length, lit(limit)), length, lit(limit)) }] : []),
    ],
  }
}

/** A node's key as PostHog names it: `<position>_<item>`. */
export const nodeKey = (pos: Expr, item: Expr): Expr => ({ op: 'concat', args: [{ op: 'to_text', arg: pos }, item], separator: '_' })
export const sourceKey: Expr = nodeKey(minus(col('pos'), lit(1)), col('prev_item'))
export const targetKey: Expr = nodeKey(col('pos'), col('item'))

/**
 * The edges (PostHog's paths query): how many times each `source → target` was walked and the
 * average milliseconds it took, most walked first (then by source and target), with the weight
 * bounds, at most `edgeLimit`.
 */
export function pathEdgesPlan(spec: PathsSpec, steps: Plan = pathStepsPlan(spec, { last: false, first: false })): Plan {
  const { q } = spec
  const count: Expr = { op: 'aggregate', fn: 'count' }
  const having = and(
    q.minEdgeWeight !== null ? bin('>=', count, lit(q.minEdgeWeight)) : undefined,
    q.maxEdgeWeight !== null ? bin('<=', count, lit(q.maxEdgeWeight)) : undefined,
  )
  // Grouped by position and items, the keys' text made per edge afterwards: making it for each of
  // the steps' rows first took more CPU than the grouping (EXPLAIN ANALYZE, 4.5M rows at 10M events).
  // The keys are never NULL from position 2 on; said so, ClickHouse hashes them as plain values.
  const key = (name: string, otherwise: Expr): Expr => ({ op: 'coalesce', args: [col(name), otherwise] })
  const keys = [key('pos', lit(0)), key('prev_item', lit('')), key('item', lit(''))]
  const edges: Plan = {
    source: fromPlan(steps),
    select: [
      { alias: 'pos', expr: keys[0]! },
      { alias: 'prev_item', expr: keys[1]! },
      { alias: 'item', expr: keys[2]! },
      { alias: 'value', expr: count },
      { alias: 'avg_ms', expr: { op: 'aggregate', fn: 'avg', arg: minus(col('ts'), col('prev_ts')) } },
    ],
    where: bin('>=', col('pos'), lit(2)),
    groupBy: keys,
    having,
  }
  return {
    source: fromPlan(edges),
    select: [{ alias: 'source', expr: sourceKey }, { alias: 'target', expr: targetKey }, ...keep(['value', 'avg_ms'])],
    orderBy: [{ expr: col('value'), desc: true }, { expr: sourceKey }, { expr: targetKey }],
    limit: q.edgeLimit,
  }
}

/**
 * The persons behind a path (PostHog's `to_actors_query`): those who dropped off at `pathDropoffKey`
 * (it is their path's last node), else who walked from `pathStartKey` and/or to `pathEndKey`; each
 * once, with the number of such steps.
 */
export function pathActorsPlan(spec: PathsSpec): Plan {
  const { q } = spec
  const text = (v: string) => lit(v)
  const where = q.pathDropoffKey !== null
    ? and(bin('=', col('pos'), col('last')), bin('=', targetKey, text(q.pathDropoffKey)))
    : and(q.pathStartKey !== null ? and(bin('>=', col('pos'), lit(2)), bin('=', sourceKey, text(q.pathStartKey))) : undefined, q.pathEndKey !== null ? bin('=', targetKey, text(q.pathEndKey)) : undefined)
  return {
    source: fromPlan(pathStepsPlan(spec)),
    select: [{ alias: 'actor', expr: col('person') }, { alias: 'event_count', expr: { op: 'aggregate', fn: 'count' } }],
    where,
    groupBy: [col('person')],
  }
}
