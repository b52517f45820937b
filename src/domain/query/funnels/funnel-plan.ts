import { and, col, fromPlan, lit, timeBetween, type Expr, type Plan, type SelectItem, type WindowFrame } from '../query-plan.ts'
import type { ResolvedRange } from '../date-range.ts'
import type { FunnelOrder } from './funnels-query.ts'

/**
 * A funnel as the plans need it: each step's and exclusion's event condition (filters included),
 * the order, the conversion window, and what the persons are broken down or bucketed by.
 */
export interface FunnelSpec {
  steps: Expr[]
  exclusions: Array<{ match: Expr; fromStep: number; toStep: number }>
  order: FunnelOrder
  windowMs: number
  range: ResolvedRange
  /** The breakdown value of an event (text, never NULL); the person's is their first step-0 event's. */
  breakdown: Expr | null
  /**
   * Funnel trends: the persons' attempts are grouped by the interval their entry (a step-0 event)
   * falls in, each interval's attempts computed apart. `entryBucket` is an event's interval key,
   * `keys` the range's keys.
   */
  entries?: { entryBucket: Expr; keys: number[] }
}

/** Keys far enough apart that `level * LEVEL_WEIGHT - t` orders by level, then earliest time (t < 2^43 ms). */
const LEVEL_WEIGHT = 2 ** 43
const notNull = (e: Expr): Expr => ({ op: 'not', arg: { op: 'is_null', arg: e } })
const bin = (fn: '=' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/', left: Expr, right: Expr): Expr => ({ op: 'binary', fn, left, right })
const when = (cond: Expr, then: Expr, otherwise: Expr = lit(null)): Expr => ({ op: 'case', when: [[cond, then]], else: otherwise })
const keep = (names: readonly string[]): SelectItem[] => names.map((n) => ({ alias: n, expr: col(n) }))
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i)

/**
 * Per person (and entry interval, for trends): how far they got and when. Rows `{level, t0..t(n-1)
 * (epoch ms of each step reached on the counted path), excluded (boolean), b (breakdown value)}`;
 * `level` is the 0-based furthest step, persons with no step-0 event are absent.
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
  const partition = spec.entries ? [col('person'), col('ik')] : [col('person')]
  const rows = eventRows(spec)
  const per = spec.order === 'unordered' ? unorderedLevels(rows, spec, partition) : orderedPaths(rows, spec, partition)
  const t = range(n).map((j) => `t${j}`)
  // The counted path's step times, the person's breakdown, and whether an exclusion cut them off.
  const perPerson: Plan = {
    source: fromPlan(per.plan),
    select: [
      ...partition.map((p) => ({ alias: (p as { name: string }).name, expr: p })),
      { alias: 'level', expr: per.level },
      ...per.times.map((expr, j) => ({ alias: t[j]!, expr })),
      { alias: 'hit_at', expr: per.hitAt },
      { alias: 'done_at', expr: per.doneAt },
      { alias: 'b', expr: per.breakdown },
    ],
    groupBy: partition,
  }
  // An exclusion counts when it came before the person completed the funnel (PostHog stops at completion).
  const excluded: Expr = { op: 'and', args: [notNull(col('hit_at')), { op: 'or', args: [{ op: 'is_null', arg: col('done_at') }, bin('<', col('hit_at'), col('done_at'))] }] }
  return {
    source: fromPlan(perPerson),
    select: [...keep(spec.entries ? ['ik'] : []), ...keep(['level', ...t, 'b']), { alias: 'excluded', expr: excluded }],
    where: notNull(col('level')),
  }
}

/**
 * The events the funnel reads: each step's and exclusion's flag, the person, the time; strict funnels
 * read every event (any other event between two steps breaks the path).
 */
function eventRows(spec: FunnelSpec): Plan {
  const any: Expr = { op: 'or', args: [...spec.steps, ...spec.exclusions.map((x) => x.match)] }
  const select: SelectItem[] = [
    { alias: 'person', expr: { op: 'person_id' } },
    { alias: 't', expr: { op: 'epoch_ms', arg: col('timestamp') } },
    ...spec.steps.map((match, i) => ({ alias: `s${i}`, expr: { op: 'coalesce', args: [match, lit(false)] } as Expr })),
    ...spec.exclusions.map((x, i) => ({ alias: `x${i}`, expr: { op: 'coalesce', args: [x.match, lit(false)] } as Expr })),
  ]
  if (spec.order === 'strict') select.push({ alias: 'u', expr: col('uuid') })
  if (spec.breakdown) select.push({ alias: 'b', expr: spec.breakdown })
  if (spec.entries) select.push({ alias: 'bk', expr: spec.entries.entryBucket })
  const plan: Plan = {
    source: { kind: 'events' },
    select,
    where: and(timeBetween(spec.range.from, spec.range.to), notNull({ op: 'person_id' }), spec.order === 'strict' ? undefined : any),
  }
  if (!spec.entries) return plan
  // Trends: one copy of a person's events per entry interval k, from that interval on.
  const { keys } = spec.entries
  const entryKey: Expr = { op: 'shift', interval: spec.range.interval, n: col('k'), arg: lit(keys[0]!) }
  const names = select.map((s) => s.alias)
  return {
    source: { kind: 'spread', plan, times: keys.length },
    select: [...keep(names), { alias: 'ik', expr: col('k') }, { alias: 'ek', expr: entryKey }],
    where: bin('>=', col('bk'), entryKey),
  }
}

/** A relation over a person's events (or paths) and the aggregates that sum it up per person. */
interface PerPerson {
  plan: Plan
  /** The 0-based furthest step. */
  level: Expr
  /** Each step's time on the counted path. */
  times: Expr[]
  /** The first exclusion that cut a path off (NULL: none), and the first completion of the funnel. */
  hitAt: Expr
  doneAt: Expr
  /** The breakdown value of the person's first step-0 event (PostHog's first-touch attribution). */
  breakdown: Expr
}

function orderedPaths(rows: Plan, spec: FunnelSpec, partition: Expr[]): PerPerson {
  const n = spec.steps.length
  const base = rows.select.map((s) => s.alias)
  const strict = spec.order === 'strict'
  const before: WindowFrame = { unit: 'range', start: 'unbounded', end: 0, excludeCurrent: true }
  const byTime = strict ? [{ expr: col('t') }, { expr: col('u') }] : [{ expr: col('t') }]
  /**
   * The latest entry that reached `level` before this row. Strict: what the row just before carried
   * (`c<level>`: a path stays at a step while consecutive events match that step, as PostHog's
   * matcher keeps it, and is dropped by any other event).
   */
  const latestBefore = (level: number): Expr =>
    strict
      ? { op: 'window', fn: 'lag', arg: col(`c${level}`), partitionBy: partition, orderBy: byTime }
      : { op: 'window', fn: 'max', arg: col(`r${level}`), partitionBy: partition, orderBy: byTime, frame: before }
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
    if (!strict) continue
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
  // Paths: the rows that continued each entry, one per step reached (slot k = the step, slot n = an
  // exclusion hit), grouped by entry: how far it got and when it first reached each step.
  const slot = col('k')
  const pathEntry: Expr = {
    op: 'case',
    when: [...range(n).map((k) => [bin('=', slot, lit(k)), col(`r${k}`)] as [Expr, Expr]), [bin('=', slot, lit(n)), when(col('hit'), col('t'))]],
    else: lit(null),
  }
  const partitionNames = partition.map((p) => (p as { name: string }).name)
  const slots: Plan = {
    source: { kind: 'spread', plan, times: n + 1 },
    select: [...keep([...partitionNames, 't', ...(spec.breakdown ? ['b'] : [])]), { alias: 'slot', expr: slot }, { alias: 'e', expr: pathEntry }],
  }
  const at = (k: number, v: Expr): Expr => when(bin('=', col('slot'), lit(k)), v)
  const paths: Plan = {
    source: fromPlan(slots),
    select: [
      ...keep(partitionNames),
      { alias: 'e', expr: col('e') },
      { alias: 'plevel', expr: { op: 'aggregate', fn: 'max', arg: when(bin('<', col('slot'), lit(n)), col('slot')) } },
      ...range(n).map((j) => ({ alias: `ft${j}`, expr: { op: 'aggregate', fn: 'min', arg: at(j, col('t')) } as Expr })),
      { alias: 'phit', expr: { op: 'aggregate', fn: 'min', arg: at(n, col('t')) } },
      ...(spec.breakdown ? [{ alias: 'pb', expr: { op: 'aggregate', fn: 'any', arg: at(0, col('b')) } as Expr }] : []),
    ],
    where: notNull(col('e')),
    groupBy: [...partition, col('e')],
  }
  // The counted path: the first to reach the person's furthest step.
  const reachedAt: Expr = { op: 'case', when: range(n).map((k) => [bin('=', col('plevel'), lit(k)), col(`ft${k}`)] as [Expr, Expr]), else: lit(null) }
  const first: Expr = bin('-', bin('*', col('plevel'), lit(LEVEL_WEIGHT)), reachedAt)
  return {
    plan: paths,
    level: { op: 'aggregate', fn: 'max', arg: col('plevel') },
    times: range(n).map((j) => ({ op: 'aggregate', fn: 'arg_max', arg: col(`ft${j}`), by: first })),
    hitAt: { op: 'aggregate', fn: 'min', arg: col('phit') },
    doneAt: { op: 'aggregate', fn: 'min', arg: col(`ft${n - 1}`) },
    breakdown: spec.breakdown ? { op: 'aggregate', fn: 'arg_min', arg: col('pb'), by: col('ft0') } : lit(null),
  }
}

function unorderedLevels(rows: Plan, spec: FunnelSpec, partition: Expr[]): PerPerson {
  const n = spec.steps.length
  const base = rows.select.map((s) => s.alias)
  const within: WindowFrame = { unit: 'range', start: -spec.windowMs, end: 0 }
  // f_j: the earliest step-j event within the window ending at this row.
  const f = range(n).map((j) => `f${j}`)
  let plan: Plan = {
    source: fromPlan(rows),
    select: [
      ...keep(base),
      ...range(n).map((j) => ({ alias: f[j]!, expr: { op: 'window', fn: 'min', arg: when(col(`s${j}`), col('t')), partitionBy: partition, orderBy: [{ expr: col('t') }], frame: within } as Expr })),
    ],
  }
  // The steps done, and the times sorted: the m-th is the f_j with m others before it.
  const rank = (j: number): Expr => ({
    op: 'case',
    when: [[{ op: 'is_null', arg: col(f[j]!) }, lit(null)]],
    else: range(n).filter((i) => i !== j).reduce<Expr>((sum, i) => {
      const earlier: Expr = i < j ? bin('<=', col(f[i]!), col(f[j]!)) : bin('<', col(f[i]!), col(f[j]!))
      return bin('+', sum, when(earlier, lit(1), lit(0)))
    }, lit(0)),
  })
  const done = range(n).reduce<Expr>((sum, j) => bin('+', sum, when(notNull(col(f[j]!)), lit(1), lit(0))), lit(0))
  plan = { source: fromPlan(plan), select: [...keep([...base, ...f]), ...range(n).map((j) => ({ alias: `q${j}`, expr: rank(j) })), { alias: 'lvl', expr: bin('-', done, lit(1)) }] }
  const sorted = (m: number): Expr => ({ op: 'case', when: range(n).map((j) => [bin('=', col(`q${j}`), lit(m)), col(f[j]!)] as [Expr, Expr]), else: lit(null) })
  plan = {
    source: fromPlan(plan),
    select: [...keep([...base, 'lvl']), ...range(n).map((m) => ({ alias: `o${m}`, expr: sorted(m) }))],
  }
  const firstAtLevel: Expr = bin('-', bin('*', col('lvl'), lit(LEVEL_WEIGHT)), col('t'))
  return {
    plan,
    level: { op: 'aggregate', fn: 'max', arg: col('lvl') },
    times: range(n).map((m) => ({ op: 'aggregate', fn: 'arg_max', arg: col(`o${m}`), by: when(notNull(col(`o${m}`)), firstAtLevel) })),
    hitAt: lit(null),
    doneAt: lit(null),
    breakdown: spec.breakdown ? { op: 'aggregate', fn: 'arg_min', arg: when(col('s0'), col('b')), by: when(col('s0'), col('t')) } : lit(null),
  }
}
