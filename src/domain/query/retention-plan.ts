import { offsetSegments, rangeKeys } from './bucket-keys.ts'
import type { ResolvedRange } from './date-range.ts'
import { and, col, fromEvents, fromPlan, lit, type Expr, type Plan } from './query-plan.ts'
import type { RetentionQuery } from './retention.ts'
import { formatInZone } from './zoned-time.ts'

/** Which events enter a cohort and which count as coming back (event or action, entity and query filters). */
export interface RetentionMatch {
  target: Expr | undefined
  returning: Expr | undefined
  /** First-ever occurrence only: the target without the entity's own property filters. */
  targetAnyProperties?: Expr | undefined
}

const when = (cond: Expr, then: Expr): Expr => ({ op: 'case', when: [[cond, then]], else: lit(null) })
const bitMask = (bits: number[]): string => bits.reduce((m, i) => m | (1n << BigInt(i)), 0n).toString()

/**
 * The retention grid in one pass over the events. Per actor (the merged person, or a group), two
 * 64-bit words with a bit per period of the range: `cohorts`, the periods the actor entered a
 * cohort in, and `returns`, the periods they did the returning event in. Then, per cohort period c
 * and offset k (c + k inside the range), the actors with bit c in `cohorts` and bit c + k in
 * `returns` (`cumulative`: any bit from c + k to the end of the cohort's look-ahead), as
 * `v<c>_<k>`; k = 0 is the cohort's size, as PostHog counts it. One row.
 */
export function retentionPlan(q: RetentionQuery, range: ResolvedRange, m: RetentionMatch): Plan {
  const keys = rangeKeys(range)
  const n = keys.length
  // Offsets from a period before the range: older instants are only ever compared with keys of the range.
  const offsets = offsetSegments(new Date(range.from.getTime() - 32 * 86_400_000), range.to, range.timeZone)
  const bucket = (ts: Expr): Expr => ({ op: 'bucket', interval: q.interval, offsets, arg: ts })
  const index = (key: Expr): Expr => ({ op: 'case', when: keys.map((k, i) => [{ op: 'binary', fn: '=', left: key, right: lit(k) }, lit(i)] as [Expr, Expr]), else: lit(null) })
  const bitOf = (ts: Expr): Expr => ({ op: 'bit_flag', index: index(bucket(ts)) })
  const inRange: Expr = { op: 'binary', fn: '>=', left: col('timestamp'), right: { op: 'time', value: range.from } }
  const isTarget = m.target ?? lit(true)
  const isReturn = m.returning ?? lit(true)
  const actor: Expr = q.groupTypeIndex === null ? { op: 'person_id' } : col(`group_${q.groupTypeIndex}`)
  const hasActor: Expr = q.groupTypeIndex === null
    ? { op: 'not', arg: { op: 'is_null', arg: actor } }
    : and({ op: 'not', arg: { op: 'is_null', arg: actor } }, { op: 'binary', fn: '!=', left: actor, right: lit('') })!
  const firstOf = (cond: Expr): Expr => ({ op: 'aggregate', fn: 'min', arg: when(cond, col('timestamp')) })
  const returns = { alias: 'returns', expr: { op: 'aggregate', fn: 'bit_or', arg: when({ op: 'and', args: [isReturn, inRange] }, bitOf(col('timestamp'))) } as Expr }
  let cohortSelect: Plan['select']
  if (q.mode === 'recurring') {
    cohortSelect = [{ alias: 'cohorts', expr: { op: 'aggregate', fn: 'bit_or', arg: when({ op: 'and', args: [isTarget, inRange] }, bitOf(col('timestamp'))) } }]
  } else if (q.mode === 'first_time') {
    cohortSelect = [{ alias: 'first_target', expr: firstOf(isTarget) }]
  } else {
    cohortSelect = [{ alias: 'first_target', expr: firstOf(isTarget) }, { alias: 'first_any', expr: firstOf(m.targetAnyProperties ?? lit(true)) }]
  }
  const perActor: Plan = {
    source: fromEvents(),
    select: [{ alias: 'actor', expr: actor }, ...cohortSelect, returns],
    // Recurring reads the range only; first time reads the target's whole history before the range's end.
    where: and(
      { op: 'binary', fn: '<', left: col('timestamp'), right: { op: 'time', value: range.to } },
      q.mode === 'recurring' ? inRange : undefined,
      q.mode === 'first_ever' ? undefined : { op: 'or', args: [isTarget, isReturn] },
      hasActor,
    ),
    groupBy: [actor],
  }
  let actors: Plan = perActor
  if (q.mode !== 'recurring') {
    const first: Expr = q.mode === 'first_time'
      ? col('first_target')
      : when({ op: 'binary', fn: '=', left: col('first_target'), right: col('first_any') }, col('first_target'))
    actors = { source: fromPlan(perActor), select: [{ alias: 'cohorts', expr: bitOf(first) }, { alias: 'returns', expr: col('returns') }] }
  }
  const cells: Plan['select'] = []
  for (let c = 0; c < n; c++) {
    const inCohort: Expr = { op: 'bits_any', arg: col('cohorts'), mask: bitMask([c]) }
    const last = Math.min(n - 1, c + q.totalIntervals - 1)
    for (let k = 0; c + k <= last; k++) {
      const backBits = q.cumulative ? Array.from({ length: last - (c + k) + 1 }, (_, i) => c + k + i) : [c + k]
      const counted: Expr = k === 0 ? inCohort : { op: 'and', args: [inCohort, { op: 'bits_any', arg: col('returns'), mask: bitMask(backBits) }] }
      cells.push({ alias: `v${c}_${k}`, expr: { op: 'aggregate', fn: 'count', arg: when(counted, lit(1)) } })
    }
  }
  return { source: fromPlan(actors), select: cells, where: { op: 'not', arg: { op: 'is_null', arg: col('cohorts') } } }
}

/**
 * PostHog's retention rows: one per period of the range (`Day 0`, `Day 1`...), each with
 * `totalIntervals` values (`Day 0` is the cohort's size); periods after the range's end count 0,
 * as PostHog returns them. `date` is the period's start in the project's zone.
 */
export function shapeRetention(row: Record<string, unknown> | undefined, q: RetentionQuery, range: ResolvedRange) {
  return range.buckets.map((start, c) => ({
    values: Array.from({ length: q.totalIntervals }, (_, k) => ({ count: Number(row?.[`v${c}_${k}`] ?? 0), label: `${q.period} ${k}` })),
    label: `${q.period} ${c}`,
    date: isoDate(start, range.timeZone),
  }))
}

/** An instant as PostHog serialises an aware datetime: local time with its offset, `Z` for UTC. */
function isoDate(at: Date, timeZone: string): string {
  const s = formatInZone(at, timeZone)
  return s.endsWith('+00:00') ? `${s.slice(0, -6)}Z` : s
}
