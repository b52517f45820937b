import { validationError } from '../../shared/errors.ts'
import { offsetSegments } from './bucket-keys.ts'
import { shiftInstant, type DateRangeInput, type Interval, type ResolvedRange } from './date-range.ts'
import { readChoice, readInteger, readNode, readText, type Node } from './query-fields.ts'
import { and, col, fromEvents, fromPlan, lit, type Expr, type Plan } from './query-plan.ts'
import { readDateRange, readSeries, type Series } from './trends-query.ts'
import { formatInZone } from './zoned-time.ts'

const PERIODS = ['Hour', 'Day', 'Week', 'Month'] as const
type Period = (typeof PERIODS)[number]
const INTERVAL: Record<Period, Interval> = { Hour: 'hour', Day: 'day', Week: 'week', Month: 'month' }
const TYPES = ['retention_recurring', 'retention_first_time', 'retention_first_ever_occurrence'] as const

export interface RetentionQuery {
  target: Series
  returning: Series
  period: Period
  interval: Interval
  /** Periods followed from each cohort's own (value 0) on. */
  totalIntervals: number
  /** First time: a person's cohort is the period of their first target event ever. */
  firstTime: boolean
  dateRange: DateRangeInput | undefined
  properties: unknown
}

/** Reads a `RetentionQuery` node (PostHog's `RetentionFilter`); errors name the field under `query.`. */
export function readRetentionQuery(node: Node, attr = 'query'): RetentionQuery {
  const fAttr = `${attr}.retentionFilter`
  const f = readNode(node.retentionFilter, fAttr)
  if (node.aggregation_group_type_index !== undefined && node.aggregation_group_type_index !== null) {
    throw validationError(`${attr}.aggregation_group_type_index`, 'Retention aggregated by groups is not supported yet.', 'invalid_input')
  }
  const period = readChoice(f.period, `${fAttr}.period`, PERIODS, 'Day')
  const type = readChoice(f.retentionType, `${fAttr}.retentionType`, TYPES, 'retention_recurring')
  const target = readEntity(f.targetEntity, `${fAttr}.targetEntity`)
  const returning = f.returningEntity === undefined || f.returningEntity === null ? target : readEntity(f.returningEntity, `${fAttr}.returningEntity`)
  return {
    target,
    returning,
    period,
    interval: INTERVAL[period],
    totalIntervals: readInteger(f.totalIntervals, `${fAttr}.totalIntervals`, { min: 1, max: 64, fallback: 8 })!,
    firstTime: type !== 'retention_recurring',
    dateRange: readDateRange(node.dateRange, `${attr}.dateRange`),
    properties: node.properties,
  }
}

/** A retention entity `{id, type: 'events'|'actions', name}` (or a series node) as a series. */
function readEntity(v: unknown, attr: string): Series {
  const node = readNode(v, attr)
  if (node.kind === 'EventsNode' || node.kind === 'ActionsNode') return readSeries(node, attr)
  const type = readChoice(node.type, `${attr}.type`, ['events', 'actions'] as const, 'events')
  if (type === 'actions') return readSeries({ kind: 'ActionsNode', id: node.id, name: node.name, properties: node.properties }, attr)
  const id = node.id === null || node.id === undefined ? null : readText(node.id, `${attr}.id`)
  return readSeries({ kind: 'EventsNode', event: id, name: node.name, properties: node.properties }, attr)
}

/** The default range when none is given: the last `totalIntervals` periods, the current one included. */
export function defaultRetentionFrom(q: RetentionQuery, now: Date, timeZone: string): string {
  return shiftInstant(now, q.interval, -(q.totalIntervals - 1), timeZone).toISOString()
}

/**
 * Per person, one bit per period of the range: the periods they entered a cohort in (`cohorts`:
 * each period with a target event; first time: only that of their first target event ever) and the
 * periods they came back in (`returns`). Then, per cohort period c and offset k, the persons with
 * bit c in `cohorts` and bit c+k in `returns` (`v<c>_<k>`; k = 0 is the cohort's size).
 * `keys` are the range's period keys (at most 64).
 */
export function retentionPlan(q: RetentionQuery, range: ResolvedRange, keys: readonly number[], target: Expr | undefined, returning: Expr | undefined): Plan {
  const n = keys.length
  if (n > 64) throw validationError('query.dateRange', `Retention covers at most 64 periods (this range has ${n}).`, 'invalid_input')
  // Offsets from a period before the range: first target events older than that fall before the first key.
  const bucket = (arg: Expr): Expr => ({ op: 'bucket', interval: q.interval, offsets: offsetSegments(shiftInstant(range.from, q.interval, -1, range.timeZone), range.to, range.timeZone), arg })
  const index = (key: Expr): Expr => ({ op: 'case', when: keys.map((k, i) => [{ op: 'binary', fn: '=', left: key, right: lit(k) }, lit(i)] as [Expr, Expr]), else: lit(null) })
  const bitOf = (ts: Expr): Expr => ({ op: 'bit_flag', index: index(bucket(ts)) })
  const inRange: Expr = { op: 'binary', fn: '>=', left: col('timestamp'), right: { op: 'time', value: range.from } }
  const isTarget = target ?? lit(true)
  const isReturn = returning ?? lit(true)
  const when = (cond: Expr, then: Expr): Expr => ({ op: 'case', when: [[cond, then]], else: lit(null) })
  const perPerson: Plan = {
    source: fromEvents(),
    select: [
      { alias: 'person', expr: { op: 'person_id' } },
      q.firstTime
        ? { alias: 'first_target', expr: { op: 'aggregate', fn: 'min', arg: when(isTarget, col('timestamp')) } }
        : { alias: 'cohorts', expr: { op: 'aggregate', fn: 'bit_or', arg: when({ op: 'and', args: [isTarget, inRange] }, bitOf(col('timestamp'))) } },
      { alias: 'returns', expr: { op: 'aggregate', fn: 'bit_or', arg: when({ op: 'and', args: [isReturn, inRange] }, bitOf(col('timestamp'))) } },
    ],
    // First time reads the target's whole history (a cohort is the first time ever).
    where: and(
      { op: 'binary', fn: '<', left: col('timestamp'), right: { op: 'time', value: range.to } },
      q.firstTime ? undefined : inRange,
      { op: 'or', args: [isTarget, isReturn] },
      { op: 'not', arg: { op: 'is_null', arg: { op: 'person_id' } } },
    ),
    groupBy: [{ op: 'person_id' }],
  }
  const persons: Plan = q.firstTime
    ? { source: fromPlan(perPerson), select: [{ alias: 'cohorts', expr: bitOf(col('first_target')) }, { alias: 'returns', expr: col('returns') }] }
    : perPerson
  const mask = (i: number) => (1n << BigInt(i)).toString()
  const inCohort = (c: number): Expr => ({ op: 'bits_any', arg: col('cohorts'), mask: mask(c) })
  const cells: Plan['select'] = []
  for (let c = 0; c < n; c++) {
    for (let k = 0; k < Math.min(q.totalIntervals, n - c); k++) {
      const counted = k === 0 ? inCohort(c) : { op: 'and', args: [inCohort(c), { op: 'bits_any', arg: col('returns'), mask: mask(c + k) }] } as Expr
      cells.push({ alias: `v${c}_${k}`, expr: { op: 'aggregate', fn: 'count', arg: when(counted, lit(1)) } })
    }
  }
  return { source: fromPlan(persons), select: cells, where: { op: 'not', arg: { op: 'is_null', arg: col('cohorts') } } }
}

/** PostHog's retention rows: one per cohort period, `values` for the periods that have started. */
export function shapeRetention(row: Record<string, unknown> | undefined, q: RetentionQuery, range: ResolvedRange) {
  const n = range.buckets.length
  return range.buckets.map((start, c) => ({
    date: formatInZone(start, range.timeZone),
    label: `${q.period} ${c}`,
    values: Array.from({ length: Math.min(q.totalIntervals, n - c) }, (_, k) => ({ count: Number(row?.[`v${c}_${k}`] ?? 0), label: `${q.period} ${k}` })),
  }))
}
