import { offsetSegments, rangeKeys } from './bucket-keys.ts'
import type { ResolvedRange } from './date-range.ts'
import { and, col, fromEvents, fromPlan, lit, when, type Expr, type Plan } from './query-plan.ts'
import { actorOf } from './actor.ts'
import type { RetentionQuery } from './retention.ts'
import { formatInZone } from './zoned-time.ts'

/** Which events enter a cohort and which count as coming back (event or action, entity and query filters). */
export interface RetentionMatch {
  target: Expr | undefined
  returning: Expr | undefined
  /** First-ever occurrence only: the target without the entity's own property filters. */
  targetAnyProperties?: Expr | undefined
}

const bitMask = (bits: number[]): string => bits.reduce((m, i) => m | (1n << BigInt(i)), 0n).toString()
const STEP_MS = { hour: 3_600_000, day: 86_400_000, week: 604_800_000 } as const

/**
 * The retention grid in one pass over the events. Per actor (the merged person, or a group), two
 * 64-bit words with a bit per period of the range: `cohorts`, the periods the actor entered a
 * cohort in, and `returns`, the periods they did the returning event in. Each actor is then
 * repeated once per cohort it is in (`c`), with `returns` shifted right by c bits, so that per
 * cohort value k is one count of the actors with bit k set (`cumulative`: any bit from k to the
 * end of the look-ahead); k = 0 is the cohort's size, as PostHog counts it. First time: each actor
 * is in one cohort at most, the period of its first target event (none if that is before the range).
 * With `minimumOccurrences` above 1 a return bit needs that many returning events in its period.
 * Rows `{c, v0..v<L-1>}`, only for cohorts with actors. Calendar periods only: `24_hour_windows`
 * is `rollingRetentionPlan`.
 */
export function retentionPlan(q: RetentionQuery, range: ResolvedRange, m: RetentionMatch): Plan {
  return gridPlan(retentionCohortsPlan(q, range, m), q)
}

/**
 * The rows `retentionPlan`'s grid counts: one per actor and cohort it is in, `{actor, c, back}`
 * (`back` its return word shifted to the cohort), so the actors of a cell are read from the same
 * rows as its number.
 */
export function retentionCohortsPlan(q: RetentionQuery, range: ResolvedRange, m: RetentionMatch): Plan {
  const keys = rangeKeys(range)
  const n = keys.length
  // Offsets from a month before the range: older instants are only ever compared with keys of the range.
  const offsets = offsetSegments(new Date(range.from.getTime() - 32 * 86_400_000), range.to, range.timeZone)
  const bucket = (ts: Expr): Expr => ({ op: 'bucket', interval: q.interval, offsets, arg: ts })
  // The period's index in the range: arithmetic on the keys (hours, days and weeks are evenly spaced), a lookup for months.
  const index = (ts: Expr): Expr => q.interval === 'month'
    ? { op: 'case', when: keys.map((k, i) => [{ op: 'binary', fn: '=', left: bucket(ts), right: lit(k) }, lit(i)] as [Expr, Expr]), else: lit(null) }
    : { op: 'binary', fn: '/', left: { op: 'binary', fn: '-', left: bucket(ts), right: lit(keys[0]!) }, right: lit(STEP_MS[q.interval]) }
  const inRange: Expr = { op: 'binary', fn: '>=', left: col('timestamp'), right: { op: 'time', value: range.from } }
  const isTarget = m.target ?? lit(true)
  const isReturn = m.returning ?? lit(true)
  const { actor, hasActor } = actorOf(q.groupTypeIndex)
  // Per event: its actor, what it is, and its period (computed once per row).
  const recurring = q.mode === 'recurring'
  const perEvent: Plan = {
    source: fromEvents(),
    select: [
      { alias: 'actor', expr: actor },
      { alias: 'is_target', expr: isTarget },
      { alias: 'is_return', expr: { op: 'and', args: [isReturn, inRange] } },
      { alias: 'ts', expr: col('timestamp') },
      { alias: 'period', expr: index(col('timestamp')) },
      ...(q.mode === 'first_ever' ? [{ alias: 'is_target_any', expr: m.targetAnyProperties ?? lit(true) }] : []),
    ],
    // Recurring reads the range only; first time reads the target's whole history before the range's end.
    where: and(
      { op: 'binary', fn: '<', left: col('timestamp'), right: { op: 'time', value: range.to } },
      recurring ? inRange : undefined,
      { op: 'or', args: [q.mode === 'first_ever' ? (m.targetAnyProperties ?? lit(true)) : isTarget, isReturn] },
      hasActor,
    ),
  }
  const perActor = q.minimumOccurrences > 1 ? perActorCounted(perEvent, q) : perActorOf(perEvent, q, bitOfPeriod(col('is_return')))
  // Recurring: each actor repeated once per cohort it is in (c = the spread's k). First time: one cohort at most.
  let perCohort: Plan
  if (recurring) {
    const shifted = (word: string): Expr => ({ op: 'bits_shift_right', arg: col(word), by: col('k') })
    perCohort = {
      source: { kind: 'spread', plan: perActor, times: n },
      select: [{ alias: 'actor', expr: col('actor') }, { alias: 'c', expr: col('k') }, { alias: 'back', expr: shifted('returns') }],
      where: { op: 'bits_any', arg: shifted('cohorts'), mask: '1' },
    }
  } else {
    const first: Expr = q.mode === 'first_time'
      ? col('first_target')
      : when({ op: 'binary', fn: '=', left: col('first_target'), right: col('first_any') }, col('first_target'))
    // A first event before the range puts the actor in no cohort of it.
    const c = when({ op: 'binary', fn: '>=', left: first, right: { op: 'time', value: range.from } }, index(first))
    perCohort = {
      source: fromPlan(perActor),
      select: [{ alias: 'actor', expr: col('actor') }, { alias: 'c', expr: c }, { alias: 'back', expr: { op: 'bits_shift_right', arg: col('returns'), by: c } }],
      where: { op: 'not', arg: { op: 'is_null', arg: c } },
    }
  }
  return perCohort
}

const bitOfPeriod = (cond: Expr): Expr => ({ op: 'aggregate', fn: 'bit_or', arg: when(cond, { op: 'bit_flag', index: col('period') }) })
const firstOf = (cond: Expr): Expr => ({ op: 'aggregate', fn: 'min', arg: when(cond, col('ts')) })

/** Per actor: the cohort word (recurring) or first target instants, and the given return word. */
function perActorOf(source: Plan, q: RetentionQuery, returns: Expr): Plan {
  return {
    source: fromPlan(source),
    select: [
      { alias: 'actor', expr: col('actor') },
      q.mode === 'recurring' ? { alias: 'cohorts', expr: bitOfPeriod(col('is_target')) } : { alias: 'first_target', expr: firstOf(col('is_target')) },
      ...(q.mode === 'first_ever' ? [{ alias: 'first_any', expr: firstOf(col('is_target_any')) }] : []),
      { alias: 'returns', expr: returns },
    ],
    groupBy: [col('actor')],
  }
}

/**
 * `minimumOccurrences` above 1: per actor and period first, where a period's return bit is set only
 * when it holds that many returning events (PostHog's `return_event_counts_by_interval`, counted
 * over the range's events); then per actor, OR-ing the words and taking the least instants.
 * The cohort's own period keeps value 0 whatever its count, as PostHog's `[0]` does.
 */
function perActorCounted(perEvent: Plan, q: RetentionQuery): Plan {
  const returnCount: Expr = { op: 'aggregate', fn: 'count', arg: when(col('is_return'), lit(1)) }
  const enough: Expr = { op: 'binary', fn: '>=', left: returnCount, right: lit(q.minimumOccurrences) }
  const perPeriod: Plan = {
    ...perActorOf(perEvent, q, when(enough, { op: 'bit_flag', index: col('period') })),
    groupBy: [col('actor'), col('period')],
  }
  const merged = (name: string, fn: 'bit_or' | 'min'): Plan['select'][number] => ({ alias: name, expr: { op: 'aggregate', fn, arg: col(name) } })
  return {
    source: fromPlan(perPeriod),
    select: [
      { alias: 'actor', expr: col('actor') },
      q.mode === 'recurring' ? merged('cohorts', 'bit_or') : merged('first_target', 'min'),
      ...(q.mode === 'first_ever' ? [merged('first_any', 'min')] : []),
      merged('returns', 'bit_or'),
    ],
    groupBy: [col('actor')],
  }
}

/**
 * The grid from rows `{c, back}` (one per actor and cohort, `back` the return word shifted to the
 * cohort): per cohort, value k counts the actors with bit k set (`cumulative`: any bit from k to
 * the end of the look-ahead); k = 0 counts them all (the cohort's size).
 */
export function gridPlan(perCohort: Plan, q: RetentionQuery): Plan {
  const values: Plan['select'] = Array.from({ length: q.totalIntervals }, (_, k) => {
    const bits = q.cumulative ? Array.from({ length: q.totalIntervals - k }, (_, i) => k + i) : [k]
    const counted: Expr = k === 0 ? lit(true) : { op: 'bits_any', arg: col('back'), mask: bitMask(bits) }
    return { alias: `v${k}`, expr: { op: 'aggregate', fn: 'count', arg: when(counted, lit(1)) } }
  })
  return { source: fromPlan(perCohort), select: [{ alias: 'c', expr: col('c') }, ...values], groupBy: [col('c')] }
}

/**
 * PostHog's retention rows: one per period of the range (`Day 0`, `Day 1`...), each with
 * `totalIntervals` values (`Day 0` is the cohort's size); periods after the range's end count 0,
 * as PostHog returns them. `date` is the period's start in the project's zone.
 */
export function shapeRetention(rows: readonly Record<string, unknown>[], q: RetentionQuery, range: ResolvedRange) {
  const byCohort = new Map(rows.map((r) => [Number(r.c), r]))
  return range.buckets.map((start, c) => ({
    values: Array.from({ length: q.totalIntervals }, (_, k) => ({ count: Number(byCohort.get(c)?.[`v${k}`] ?? 0), label: `${q.period} ${k}` })),
    label: `${q.period} ${c}`,
    date: isoDate(start, range.timeZone),
  }))
}

/** An instant as PostHog serialises an aware datetime: local time with its offset, `Z` for UTC. */
function isoDate(at: Date, timeZone: string): string {
  const s = formatInZone(at, timeZone)
  return s.endsWith('+00:00') ? `${s.slice(0, -6)}Z` : s
}
