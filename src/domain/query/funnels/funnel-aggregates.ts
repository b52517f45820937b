import { col, fromPlan, lit, type Expr, type Plan } from '../query-plan.ts'

/** Plans over `funnelPersonsPlan`'s rows: what the three funnel visualisations show. */

const counted: Expr = { op: 'not', arg: col('excluded') }
const reached = (step: number): Expr => ({ op: 'binary', fn: '>=', left: col('level'), right: lit(step) })
const sinceStep = (from: number, to: number): Expr => ({ op: 'binary', fn: '-', left: col(`t${to}`), right: col(`t${from}`) })
const ifReached = (step: number, value: Expr): Expr => ({ op: 'case', when: [[reached(step), value]], else: lit(null) })

/**
 * Steps: per breakdown value (`value`, folded as the caller decides; one row without), the persons
 * who reached each step (`count_k`) and, from step 1, the mean and median milliseconds from the step
 * before (`avg_k`, `median_k`) over those persons.
 */
export function funnelStepsPlan(persons: Plan, steps: number, value: Expr | null): Plan {
  const per = Array.from({ length: steps }, (_, k) => k)
  return {
    source: fromPlan(persons),
    select: [
      ...(value ? [{ alias: 'value', expr: value }] : []),
      ...per.map((k) => ({ alias: `count_${k}`, expr: { op: 'aggregate', fn: 'count', arg: ifReached(k, lit(1)) } as Expr })),
      ...per.slice(1).flatMap((k) => [
        { alias: `avg_${k}`, expr: { op: 'aggregate', fn: 'avg', arg: ifReached(k, sinceStep(k - 1, k)) } as Expr },
        { alias: `median_${k}`, expr: { op: 'aggregate', fn: 'quantile', quantile: 0.5, arg: ifReached(k, sinceStep(k - 1, k)) } as Expr },
      ]),
    ],
    where: counted,
    groupBy: value ? [value] : undefined,
  }
}

/** The breakdown values by persons who entered the funnel, most first (ties by value), `limit` rows. */
export function funnelBreakdownValuesPlan(persons: Plan, limit: number): Plan {
  const entered: Expr = { op: 'aggregate', fn: 'count' }
  return {
    source: fromPlan(persons),
    select: [{ alias: 'value', expr: col('b') }, { alias: 'persons', expr: entered }],
    where: counted,
    groupBy: [col('b')],
    orderBy: [{ expr: entered, desc: true }, { expr: col('b') }],
    limit,
  }
}

/** Time to convert from `from` to `to` of persons who got there: `{persons, min_ms, max_ms, avg_ms}`. */
export function conversionTimeStatsPlan(persons: Plan, from: number, to: number): Plan {
  const ms = sinceStep(from, to)
  return {
    source: fromPlan(persons),
    select: [
      { alias: 'persons', expr: { op: 'aggregate', fn: 'count' } },
      { alias: 'min_ms', expr: { op: 'aggregate', fn: 'min', arg: ms } },
      { alias: 'max_ms', expr: { op: 'aggregate', fn: 'max', arg: ms } },
      { alias: 'avg_ms', expr: { op: 'aggregate', fn: 'avg', arg: ms } },
    ],
    where: { op: 'and', args: [counted, reached(to)] },
  }
}

/** The same persons by histogram bin: `{bin, persons}`, bin i holding `[min + i*width, min + (i+1)*width)` ms. */
export function conversionTimeBinsPlan(persons: Plan, from: number, to: number, minMs: number, widthMs: number): Plan {
  const bin: Expr = { op: 'floor', arg: { op: 'binary', fn: '/', left: { op: 'binary', fn: '-', left: sinceStep(from, to), right: lit(minMs) }, right: lit(widthMs) } }
  return {
    source: fromPlan(persons),
    select: [{ alias: 'bin', expr: bin }, { alias: 'persons', expr: { op: 'aggregate', fn: 'count' } }],
    where: { op: 'and', args: [counted, reached(to)] },
    groupBy: [bin],
  }
}

/**
 * Conversion trends: per entry interval (`k`, its key; and breakdown `value`, when given, of the persons whose
 * value is among `values`), persons who reached `from` and `to` from an entry in it.
 */
export function conversionTrendsPlan(persons: Plan, from: number, to: number, breakdown?: { value: Expr; values: string[] }): Plan {
  const by = breakdown ? [col('ek'), breakdown.value] : [col('ek')]
  return {
    source: fromPlan(persons),
    select: [
      { alias: 'k', expr: col('ek') },
      ...(breakdown ? [{ alias: 'value', expr: breakdown.value }] : []),
      { alias: 'entered', expr: { op: 'aggregate', fn: 'count', arg: ifReached(from, lit(1)) } },
      { alias: 'converted', expr: { op: 'aggregate', fn: 'count', arg: ifReached(to, lit(1)) } },
    ],
    where: breakdown ? { op: 'and', args: [counted, { op: 'in', arg: breakdown.value, values: breakdown.values }] } : counted,
    groupBy: by,
  }
}
