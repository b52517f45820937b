import { and, bin, col, fromPlan, keep, lit, notNull, timeBetween, when, type Expr, type Plan, type SelectItem, type SequenceStep, type WindowFrame } from '../query-plan.ts'
import { unorderedEntries, unorderedLevels } from './unordered-plan.ts'
import type { ResolvedRange } from '../date-range.ts'
import type { FunnelOrder } from './funnels-query.ts'

/**
 * Which breakdown value a person's funnel is counted under (PostHog's `breakdownAttributionType`):
 * their first or last event's that has one (once per person), each value their events carry with
 * only that value's events counted (`all_events`), or each value of their step-`step` events with
 * that step only completed by an event of the value (`step`).
 */
export type FunnelAttribution = { type: 'first_touch' } | { type: 'last_touch' } | { type: 'all_events' } | { type: 'step'; step: number }

export interface FunnelBreakdown {
  /** An event's breakdown value (text, never NULL). */
  value: Expr
  attribution: FunnelAttribution
  /** The value of an event without one (every part missing); first and last touch pass over those. */
  none: string
}

/**
 * A funnel as the plans need it: each step's and exclusion's event condition (filters included),
 * the order, the conversion window, who goes through it, and what they are broken down or bucketed by.
 */
export interface FunnelSpec {
  steps: Expr[]
  exclusions: Array<{ match: Expr; fromStep: number; toStep: number }>
  order: FunnelOrder
  windowMs: number
  range: ResolvedRange
  /** The actor of an event (its person, or a group) and whether it has one. */
  actor: { actor: Expr; hasActor: Expr }
  breakdown: FunnelBreakdown | null
  /**
   * What every event the funnel reads passes, steps and exclusions alike (the test-account filters,
   * as PostHog's funnel event query applies them): other events are not read at all, so they do not
   * break a strict sequence either.
   */
  eventFilter?: Expr
  /**
   * Funnel trends: the actors' attempts are grouped by the interval their entry falls in (a step-0
   * event; for unordered funnels, a path's first event), each interval's attempts computed apart.
   * `entryBucket` is an event's interval key, `keys` the range's keys.
   */
  entries?: { entryBucket: Expr; keys: number[] }
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i)

/**
 * Per actor (and entry interval, for trends; and breakdown value, when a person can count under
 * several): how far they got and when. Rows `{person, ek (trends: the entry interval's key), level,
 * t0..t(n-1) (epoch ms of each step reached on the counted path; NULL in trends of unordered
 * funnels), excluded (boolean), b (breakdown value or NULL)}` (`person` is the actor, a person or a
 * group key); `level` is the 0-based furthest step, actors with no step-0 event are absent.
 *
 * Ordered funnels follow PostHog's step-by-step matcher: an event completes step k when an earlier
 * event (or one at the same instant) completed step k-1 on a path whose entry is within the
 * window; of several paths the latest entry is kept (it leaves the most of the window), so for
 * each event and step it is enough to know the latest entry that reached the step before — a
 * running maximum, one window pass per step. The counted path is the first to reach the person's
 * furthest step, and its step times are the first events that continued it. Strict funnels
 * continue a path only from the person's immediately preceding event. Unordered funnels count, at
 * each event, the distinct steps done within the window before it.
 */
export function funnelPersonsPlan(spec: FunnelSpec): Plan {
  const n = spec.steps.length
  const attribution = spec.breakdown?.attribution.type
  const perValue = attribution === 'all_events' || attribution === 'step'
  const unorderedTrends = spec.order === 'unordered' && spec.entries !== undefined
  const partition = [col('person'), ...(spec.entries && !unorderedTrends ? [col('ek')] : []), ...(perValue ? [col('b')] : [])]
  const read = eventRows(spec, !unorderedTrends)
  const rows = spec.breakdown?.attribution.type === 'step' ? attributeToStep(read, spec.breakdown.attribution.step) : read
  const t = range(n).map((j) => `t${j}`)
  const counted = unorderedTrends ? unorderedEntries(rows, spec, partition) : countedPaths(rows, spec, partition)
  if (attribution !== 'first_touch' && attribution !== 'last_touch') return counted
  // One value per person: their first (last) funnel event's that has one.
  const { value, none } = spec.breakdown!
  const withValue = when(bin('!=', value, lit(none)), col('timestamp'))
  const touch: Plan = {
    source: { kind: 'events' },
    select: [
      { alias: 'person', expr: spec.actor.actor },
      { alias: 'touch', expr: { op: 'coalesce', args: [{ op: 'aggregate', fn: attribution === 'first_touch' ? 'arg_min' : 'arg_max', arg: value, by: withValue }, lit(none)] } },
    ],
    where: eventsWhere(spec),
    groupBy: [spec.actor.actor],
  }
  return {
    source: { kind: 'join', left: { ...counted, select: counted.select.filter((s) => s.alias !== 'b') }, right: touch, using: ['person'] },
    select: [...keep(['person', ...(spec.entries ? ['ek'] : []), 'level', ...t, 'excluded']), { alias: 'b', expr: col('touch') }],
  }
}

/** Each actor's counted path (per entry interval, per value) and whether an exclusion cut it off. */
function countedPaths(rows: Plan, spec: FunnelSpec, partition: Expr[]): Plan {
  const n = spec.steps.length
  const t = range(n).map((j) => `t${j}`)
  const partitionNames = partition.map((p) => (p as { name: string }).name)
  const per = spec.order === 'unordered' ? unorderedLevels(rows, spec, partition) : orderedPaths(rows, spec, partition)
  // The counted path's step times, and whether an exclusion cut them off.
  const perPerson: Plan = {
    source: fromPlan(per.plan),
    select: [
      ...keep(partitionNames),
      { alias: 'level', expr: per.level },
      ...per.times.map((expr, j) => ({ alias: t[j]!, expr })),
      { alias: 'hit_at', expr: per.hitAt },
      { alias: 'done_at', expr: per.doneAt },
    ],
    groupBy: partition,
  }
  // (Unordered funnels apply their exclusions in `unorderedLevels`: hit_at is NULL for them.)
  // An exclusion counts when it came before the person completed the funnel (PostHog stops at completion).
  const excluded: Expr = { op: 'and', args: [notNull(col('hit_at')), { op: 'or', args: [{ op: 'is_null', arg: col('done_at') }, bin('<', col('hit_at'), col('done_at'))] }] }
  return {
    source: fromPlan(perPerson),
    select: [...keep(['person', ...(spec.entries ? ['ek'] : []), 'level', ...t]), { alias: 'excluded', expr: excluded }, { alias: 'b', expr: partitionNames.includes('b') ? col('b') : lit(null) }],
    where: notNull(col('level')),
  }
}

/** Which events the funnel reads: in the range, with an actor, and (but for strict funnels) a step or exclusion. */
function eventsWhere(spec: FunnelSpec): Expr {
  const any: Expr = { op: 'or', args: [...spec.steps, ...spec.exclusions.map((x) => x.match)] }
  return and(timeBetween(spec.range.from, spec.range.to), spec.actor.hasActor, spec.eventFilter, spec.order === 'strict' ? undefined : any)!
}

/**
 * Step attribution: each of a person's events once per value their step-`step` events carry, that
 * step completed only by an event of the value (`b` becomes the value). Persons without such an
 * event are left out, as PostHog leaves them.
 */
function attributeToStep(rows: Plan, step: number): Plan {
  const candidates: Plan = {
    source: fromPlan(rows),
    select: [{ alias: 'person', expr: col('person') }, { alias: 'v', expr: col('b') }],
    where: col(`s${step}`),
    groupBy: [col('person'), col('b')],
  }
  const names = rows.select.map((s) => s.alias).filter((a) => a !== 'b' && a !== `s${step}`)
  return {
    source: { kind: 'join', left: rows, right: candidates, using: ['person'] },
    select: [...keep(names), { alias: `s${step}`, expr: { op: 'and', args: [col(`s${step}`), bin('=', col('b'), col('v'))] } }, { alias: 'b', expr: col('v') }],
  }
}

/**
 * The events the funnel reads: each step's and exclusion's flag, the actor, the time; strict funnels
 * read every event (any other event between two steps breaks the path). For trends, `bk` is the
 * event's interval key and, when `spread`, the rows are copied once per entry interval.
 */
function eventRows(spec: FunnelSpec, spread = true): Plan {
  const select: SelectItem[] = [
    { alias: 'person', expr: spec.actor.actor },
    { alias: 't', expr: { op: 'epoch_ms', arg: col('timestamp') } },
    ...spec.steps.map((match, i) => ({ alias: `s${i}`, expr: { op: 'coalesce', args: [match, lit(false)] } as Expr })),
    ...spec.exclusions.map((x, i) => ({ alias: `x${i}`, expr: { op: 'coalesce', args: [x.match, lit(false)] } as Expr })),
  ]
  if (spec.order === 'strict') select.push({ alias: 'u', expr: col('uuid') })
  if (spec.breakdown) select.push({ alias: 'b', expr: spec.breakdown.value })
  if (spec.entries) select.push({ alias: 'bk', expr: spec.entries.entryBucket })
  const plan: Plan = { source: { kind: 'events' }, select, where: eventsWhere(spec) }
  if (!spec.entries || !spread) return plan
  // Trends: one copy of a person's events per entry interval k, from that interval on.
  const { keys } = spec.entries
  const entryKey: Expr = { op: 'shift', interval: spec.range.interval, n: col('k'), arg: lit(keys[0]!) }
  const names = select.map((s) => s.alias)
  return {
    source: { kind: 'spread', plan, times: keys.length },
    select: [...keep(names), { alias: 'ek', expr: entryKey }],
    where: bin('>=', col('bk'), entryKey),
  }
}

/** A relation over a person's events (or paths) and the aggregates that sum it up per person. */
export interface PerPerson {
  plan: Plan
  /** The 0-based furthest step. */
  level: Expr
  /** Each step's time on the counted path. */
  times: Expr[]
  /** The first exclusion that cut a path off (NULL: none), and the first completion of the funnel. */
  hitAt: Expr
  doneAt: Expr
}

function orderedPaths(rows: Plan, spec: FunnelSpec, partition: Expr[]): PerPerson {
  return spec.order === 'strict' ? strictPaths(rows, spec, partition) : orderedSequence(rows, spec, partition)
}

/**
 * Strict funnels continue a path only from the person's immediately preceding event: the latest
 * entry that reached a level before a row is what the row just before carried (`c<level>`: a path
 * stays at a step while consecutive events match that step, as PostHog's matcher keeps it, and is
 * dropped by any other event). Every row is kept: any event between two steps breaks a path.
 */
function strictPaths(rows: Plan, spec: FunnelSpec, partition: Expr[]): PerPerson {
  const n = spec.steps.length
  const base = rows.select.map((s) => s.alias)
  const byTime = [{ expr: col('t') }, { expr: col('u') }]
  const latestBefore = (level: number): Expr => ({ op: 'window', fn: 'lag', arg: col(`c${level}`), partitionBy: partition, orderBy: byTime })
  const inWindow = (entry: Expr): Expr => bin('<=', bin('-', col('t'), entry), lit(spec.windowMs))
  // r0: the row's own time when it is a step-0 event (an entry; for trends only in its own interval).
  const isEntry: Expr = spec.entries ? { op: 'and', args: [col('s0'), bin('=', col('bk'), col('ek'))] } : col('s0')
  const done = [...base]
  let plan: Plan = rows
  const add = (alias: string, expr: Expr) => {
    plan = { source: fromPlan(plan), select: [...keep(done), { alias, expr }] }
    done.push(alias)
  }
  for (let k = 0; k < n; k++) {
    if (k === 0) {
      add('r0', when(isEntry, col('t')))
    } else {
      // The window in a column of its own, read twice by the next level (written out twice, DuckDB's
      // planning time grew exponentially with the steps: 1.3 s at 15 steps).
      add(`p${k}`, latestBefore(k - 1))
      add(`r${k}`, when({ op: 'and', args: [col(`s${k}`), inWindow(col(`p${k}`))] }, col(`p${k}`)))
    }
    // Runs of consecutive step-k events (g), and the latest entry that reached k within the run (c).
    const upToHere: WindowFrame = { unit: 'rows', start: 'unbounded', end: 0 }
    add(`g${k}`, { op: 'window', fn: 'sum', arg: when(col(`s${k}`), lit(0), lit(1)), partitionBy: partition, orderBy: byTime, frame: upToHere })
    add(`c${k}`, when(col(`s${k}`), { op: 'window', fn: 'max', arg: col(`r${k}`), partitionBy: [...partition, col(`g${k}`)], orderBy: byTime, frame: upToHere }))
  }
  // Exclusion hits: an excluded event inside the window of the latest entry that reached a step
  // before it, while that entry had not yet reached the next step.
  const hits: Expr[] = spec.exclusions.flatMap((x, i) =>
    range(x.toStep - x.fromStep).map((d) => {
      const k = x.fromStep + d + 1
      const reached = latestBefore(k - 1)
      const next = latestBefore(k)
      return { op: 'and', args: [col(`x${i}`), inWindow(reached), { op: 'or', args: [{ op: 'is_null', arg: next }, bin('<', next, reached)] }] } as Expr
    }),
  )
  plan = { source: fromPlan(plan), select: [...keep(done), { alias: 'hit', expr: hits.length ? { op: 'or', args: hits } : lit(false) }] }
  return countedPath(plan, n, partition)
}

/**
 * Ordered (not strict) funnels as one sequence over each actor's events by time: `p<k>` is the
 * latest entry that reached step k-1 before the row or at its instant (`max_before` of `r<k-1>`),
 * all levels over one order (ClickHouse sorts each actor's events once, in linear array programs
 * after it). Then each row's entries (`r<k>`: the row continues that path to step k when it is a
 * step-k event within the entry's window) and exclusion hits, as `countedPath` needs them. Between
 * the levels a `prune` lets an engine drop the rows that can no longer matter.
 */
function orderedSequence(rows: Plan, spec: FunnelSpec, partition: Expr[]): PerPerson {
  const n = spec.steps.length
  const base = rows.select.map((s) => s.alias)
  const inWindow = (entry: Expr): Expr => bin('<=', bin('-', col('t'), entry), lit(spec.windowMs))
  // r0: the row's own time when it is a step-0 event (an entry; for trends only in its own interval).
  const isEntry: Expr = spec.entries ? { op: 'and', args: [col('s0'), bin('=', col('bk'), col('ek'))] } : col('s0')
  const entryAt = (k: number): Expr => (k === 0 ? when(isEntry, col('t')) : when({ op: 'and', args: [col(`s${k}`), inWindow(col(`p${k}`))] }, col(`p${k}`)))
  // p<n> (after the last step) only when an exclusion runs up to the last step.
  const levels = spec.exclusions.some((x) => x.toStep === n - 1) ? n : n - 1
  // Rows that can still matter after level k: continuations (r1..rk), events of later steps,
  // exclusions, and each actor's first entry (a path of level 0; the rows at its instant too). The
  // others change no later `p` (the entries they carry are all before), no aggregate of `countedPath`.
  const stillNeeded = (k: number): Expr => ({
    op: 'or',
    args: [
      ...range(k).map((j) => notNull(entryAt(j + 1))),
      ...range(n - k - 1).map((j) => col(`s${k + 1 + j}`)),
      ...spec.exclusions.map((_, i) => col(`x${i}`)),
      { op: 'and', args: [isEntry, { op: 'or', args: [{ op: 'is_null', arg: col('p1') }, bin('=', col('p1'), col('t'))] }] },
    ],
  })
  // A prune between the levels: on DuckDB each level's window sorts fewer rows (the bench's 2M
  // events to 0.73M after the first step) and fewer rows go into `countedPath`; ClickHouse's
  // arrays keep them (one sort per actor whatever the levels).
  const steps: SequenceStep[] = range(levels).flatMap((k): SequenceStep[] => [
    ...(k >= 1 && k < n - 1 ? [{ alias: `kept${k}`, fn: 'prune' as const, arg: stillNeeded(k) }] : []),
    { alias: `p${k + 1}`, fn: 'max_before', arg: entryAt(k) },
  ])
  const source: Plan['source'] = steps.length ? { kind: 'sequence', plan: rows, partitionBy: partition.map((p) => (p as { name: string }).name), orderBy: ['t'], steps } : fromPlan(rows)
  // Exclusion hits: an excluded event inside the window of the latest entry that reached a step
  // before it, while that entry had not yet reached the next step.
  const hits: Expr[] = spec.exclusions.flatMap((x, i) =>
    range(x.toStep - x.fromStep).map((d) => {
      const k = x.fromStep + d + 1
      const [reached, next] = [col(`p${k}`), col(`p${k + 1}`)]
      return { op: 'and', args: [col(`x${i}`), inWindow(reached), { op: 'or', args: [{ op: 'is_null', arg: next }, bin('<', next, reached)] }] } as Expr
    }),
  )
  const plan: Plan = {
    source,
    select: [
      ...keep([...base, ...steps.filter((st) => st.fn === 'max_before').map((st) => st.alias)]),
      ...range(n).map((k) => ({ alias: `r${k}`, expr: entryAt(k) })),
      { alias: 'hit', expr: hits.length ? { op: 'or', args: hits } : lit(false) },
    ],
  }
  return countedPath(plan, n, partition)
}

/**
 * From the rows with each step's entry (`r0`..`r(n-1)`) and exclusion hits: per actor, the furthest
 * level, the counted path (the first to reach it: its entry `es`), and that path's step times (the
 * first rows that continued it), in two grouped passes joined on the actor.
 */
function countedPath(plan: Plan, n: number, partition: Expr[]): PerPerson {
  const names = partition.map((p) => (p as { name: string }).name)
  const levelOf: Expr = { op: 'case', when: [...range(n).reverse().map((k) => [notNull(col(`r${k}`)), lit(k)] as [Expr, Expr])], else: lit(null) }
  const firstOf = (cond: Expr): Expr => ({ op: 'aggregate', fn: 'min', arg: when(cond, col('t')) })
  const perActor: Plan = {
    source: fromPlan(plan),
    select: [
      ...keep(names),
      { alias: 'plevel', expr: { op: 'aggregate', fn: 'max', arg: levelOf } },
      { alias: 'e0', expr: { op: 'aggregate', fn: 'min', arg: col('r0') } },
      ...range(n - 1).map((j) => ({ alias: `e${j + 1}`, expr: { op: 'aggregate', fn: 'arg_min', arg: col(`r${j + 1}`), by: when(notNull(col(`r${j + 1}`)), col('t')) } as Expr })),
      { alias: 'phit', expr: firstOf(col('hit')) },
      { alias: 'pdone', expr: firstOf(notNull(col(`r${n - 1}`))) },
    ],
    groupBy: partition,
  }
  const counted: Plan = {
    source: fromPlan(perActor),
    select: [
      ...keep([...names, 'plevel', 'phit', 'pdone']),
      { alias: 'es', expr: { op: 'case', when: range(n).map((k) => [bin('=', col('plevel'), lit(k)), col(`e${k}`)] as [Expr, Expr]), else: lit(null) } },
    ],
  }
  // The same relation on both sides: compiled as one materialized CTE, computed once.
  const joined: Plan = {
    source: { kind: 'join', left: counted, right: plan, using: names },
    select: keep([...names, 'plevel', 'phit', 'pdone', 'es', 't', ...range(n - 1).map((j) => `r${j + 1}`)]),
  }
  const any = (name: string): Expr => ({ op: 'aggregate', fn: 'max', arg: col(name) })
  return {
    plan: joined,
    level: any('plevel'),
    times: range(n).map((j) => (j === 0 ? any('es') : { op: 'aggregate', fn: 'min', arg: when(bin('=', col(`r${j}`), col('es')), col('t')) })),
    hitAt: any('phit'),
    doneAt: any('pdone'),
  }
}
