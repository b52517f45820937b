import { bin, col, fromPlan, keep, lit, notNull, when, type Expr, type Plan, type WindowFrame } from '../query-plan.ts'
import type { FunnelSpec, PerPerson } from './funnel-plan.ts'

/** Unordered funnels' plans (PostHog's `AggregateFunnelRowUnordered` and its trends matcher), for `funnelPersonsPlan`. */

/** Keys far enough apart that `level * LEVEL_WEIGHT - t` orders by level, then earliest time (t < 2^43 ms). */
const LEVEL_WEIGHT = 2 ** 43
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i)

/**
 * At each event, the earliest event of each step within the window ending there: the steps done
 * (`lvl`, 0-based) and their times sorted (`o0`..); per actor the first event with the most steps.
 *
 * With exclusions, as PostHog's current matcher (its Rust `AggregateFunnelRowUnordered`): an
 * exclusion event clears the steps done so far, so the steps count within the segment of events
 * since the last exclusion (`seg`); and what was done is kept only when the matcher records it:
 * when the next event drops an event out of the window (`o0 + window < next t`), when the funnel
 * is complete, or at the actor's last event. Progress an exclusion interrupts before any of these
 * is lost; earlier recorded progress stays (persons are left out only of the steps after it).
 */
export function unorderedLevels(rows: Plan, spec: FunnelSpec, partition: Expr[]): PerPerson {
  const n = spec.steps.length
  const within: WindowFrame = { unit: 'range', start: -spec.windowMs, end: 0 }
  const byTime = [{ expr: col('t') }]
  let source = rows
  let stepPartition = partition
  if (spec.exclusions.length > 0) {
    const exclusionOnly: Expr = { op: 'and', args: [{ op: 'or', args: spec.exclusions.map((_, i) => col(`x${i}`)) }, { op: 'not', arg: { op: 'or', args: range(n).map((j) => col(`s${j}`)) } }] }
    const upToHere: WindowFrame = { unit: 'rows', start: 'unbounded', end: 0 }
    source = {
      source: fromPlan(rows),
      select: [
        ...keep(rows.select.map((s) => s.alias)),
        { alias: 'seg', expr: { op: 'window', fn: 'sum', arg: when(exclusionOnly, lit(1), lit(0)), partitionBy: partition, orderBy: byTime, frame: upToHere } },
        { alias: 'nt', expr: { op: 'window', fn: 'lead', arg: col('t'), partitionBy: partition, orderBy: byTime } },
      ],
    }
    stepPartition = [...partition, col('seg')]
  }
  const base = source.select.map((s) => s.alias)
  // f_j: the earliest step-j event within the window ending at this row.
  const f = range(n).map((j) => `f${j}`)
  let plan: Plan = {
    source: fromPlan(source),
    select: [
      ...keep(base),
      ...range(n).map((j) => ({ alias: f[j]!, expr: { op: 'window', fn: 'min', arg: when(col(`s${j}`), col('t')), partitionBy: stepPartition, orderBy: byTime, frame: within } as Expr })),
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
  // Without exclusions every row's steps are eventually recorded (nothing is ever cleared).
  const recorded: Expr =
    spec.exclusions.length === 0
      ? lit(true)
      : { op: 'or', args: [{ op: 'is_null', arg: col('nt') }, bin('=', col('lvl'), lit(n - 1)), bin('<', bin('+', col('o0'), lit(spec.windowMs)), col('nt'))] }
  return {
    plan,
    level: { op: 'aggregate', fn: 'max', arg: when(spec.exclusions.length === 0 ? lit(true) : { op: 'and', args: [recorded, bin('>=', col('lvl'), lit(0))] }, col('lvl')) },
    times: range(n).map((m) => ({ op: 'aggregate', fn: 'arg_max', arg: col(`o${m}`), by: when({ op: 'and', args: [recorded, notNull(col(`o${m}`))] }, firstAtLevel) })),
    hitAt: lit(null),
    doneAt: lit(null),
  }
}

/**
 * Conversion trends of unordered funnels, as PostHog's matcher runs them: each step event starts a
 * path (its interval is the entry's) reaching the distinct steps done within the window from it; an
 * excluded event inside that window before the path completed drops the path. Per actor and entry
 * interval, the furthest path: rows as `funnelPersonsPlan`'s, without step times.
 */
export function unorderedEntries(rows: Plan, spec: FunnelSpec, partition: Expr[]): Plan {
  const n = spec.steps.length
  const names = rows.select.map((s) => s.alias)
  const ahead: WindowFrame = { unit: 'range', start: 0, end: spec.windowMs }
  const after: WindowFrame = { unit: 'range', start: 1, end: spec.windowMs }
  const window = (arg: Expr, frame: WindowFrame): Expr => ({ op: 'window', fn: 'min', arg, partitionBy: partition, orderBy: [{ expr: col('t') }], frame })
  const f = range(n).map((j) => `f${j}`)
  const exclusion: Expr = { op: 'or', args: spec.exclusions.map((_, i) => col(`x${i}`)) }
  const ahead1: Plan = {
    source: fromPlan(rows),
    select: [
      ...keep(names),
      ...range(n).map((j) => ({ alias: f[j]!, expr: window(when(col(`s${j}`), col('t')), ahead) })),
      { alias: 'nx', expr: spec.exclusions.length ? window(when(exclusion, col('t')), after) : lit(null) },
    ],
  }
  const done = range(n).reduce<Expr>((sum, j) => bin('+', sum, when(notNull(col(f[j]!)), lit(1), lit(0))), lit(0))
  const completedBefore: Expr = { op: 'and', args: f.map((name) => bin('<', col(name), col('nx'))) }
  const dropped: Expr = { op: 'and', args: [notNull(col('nx')), { op: 'not', arg: { op: 'coalesce', args: [completedBefore, lit(false)] } }] }
  const anchor: Expr = { op: 'and', args: [{ op: 'or', args: range(n).map((j) => col(`s${j}`)) }, { op: 'not', arg: dropped }] }
  const keys = partition.map((p) => (p as { name: string }).name)
  const perEntry: Plan = {
    source: fromPlan(ahead1),
    select: [...keep(keys), { alias: 'ek', expr: col('bk') }, { alias: 'level', expr: { op: 'aggregate', fn: 'max', arg: when(anchor, bin('-', done, lit(1))) } }],
    groupBy: [...partition, col('bk')],
  }
  return {
    source: fromPlan(perEntry),
    select: [
      ...keep(['person', 'ek', 'level']),
      ...range(n).map((j) => ({ alias: `t${j}`, expr: lit(null) })),
      { alias: 'excluded', expr: lit(false) },
      { alias: 'b', expr: keys.includes('b') ? col('b') : lit(null) },
    ],
    where: notNull(col('level')),
  }
}
