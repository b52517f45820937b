import type { ActionStepDefinition } from '../actions/match-action.ts'
import { validationError } from '../../shared/errors.ts'
import { resolveInstant } from './date-range.ts'
import { filterLeaves, type Node } from './query-fields.ts'
import { and, col, count, eq, fromEvents, fromPlan, lit, timeBetween, type BinaryFn, type Expr, type Plan } from './query-plan.ts'
import { addWall, fromWallTime, toWallTime } from './zoned-time.ts'

/** PostHog's `BehavioralPropertyType` values (`posthog/models/property/property.py`). */
export const BEHAVIORAL_VALUES = [
  'performed_event',
  'performed_event_multiple',
  'performed_event_first_time',
  'performed_event_sequence',
  'performed_event_regularly',
  'stopped_performing_event',
  'restarted_performing_event',
] as const

/** What behavioural criteria read besides their own fields, resolved when the cohorts are loaded for a query. */
export interface BehavioralInputs {
  /** The query's now: relative windows end here. */
  now: Date
  /** The project's zone, for `explicit_datetime` dates. */
  timeZone: string
  /** Steps of the actions the criteria name (`event_type: 'actions'`), by id. */
  actions: ReadonlyMap<number, readonly ActionStepDefinition[]>
}

type TimeInterval = keyof typeof INTERVAL_SECONDS
// `INTERVAL_TO_SECONDS` of posthog/queries/foss_cohort_query.py: what a sequence's window and the
// "more recent than" check measure (windows themselves are calendar intervals, as ClickHouse's are).
const INTERVAL_SECONDS = { minute: 60, hour: 3600, day: 86400, week: 604800, month: 2592000, year: 31536000 }
// `get_count_operator` of posthog/models/cohort/util.py.
const COUNT_OPERATORS: Record<string, BinaryFn> = { gte: '>=', lte: '<=', gt: '>', lt: '<', eq: '=', exact: '=' }
const MAX_TIME_VALUE = 10_000
const MAX_PERIODS = 366

/** Why a stored behavioural criterion cannot be read (checked when a cohort is saved), or null. */
export function behavioralShapeProblem(node: Node): string | null {
  if (!(BEHAVIORAL_VALUES as readonly unknown[]).includes(node.value)) return `behavioral value must be one of ${BEHAVIORAL_VALUES.join(', ')}`
  if (node.event_type !== 'events' && node.event_type !== 'actions') return 'behavioral event_type must be events or actions'
  if (!isEntityKey(node.event_type, node.key)) return 'behavioral key must be an event name or an action id'
  return null
}

/** Ids of the actions behavioural criteria in a cohort definition name, to load before building. */
export function behavioralActionIds(properties: unknown): number[] {
  const ids: number[] = []
  for (const n of filterLeaves(properties)) {
    if (n.type !== 'behavioral') continue
    if (n.event_type === 'actions' && isEntityKey('actions', n.key)) ids.push(Number(n.key))
    if (n.value === 'performed_event_sequence' && n.seq_event_type === 'actions' && isEntityKey('actions', n.seq_event)) ids.push(Number(n.seq_event))
  }
  return [...new Set(ids)]
}

/**
 * A behavioural cohort criterion as a test of the event's person: membership in the persons a
 * subquery over the project's events finds (`person_id IN (SELECT person_id FROM events WHERE …
 * GROUP BY person_id HAVING …)`), with windows measured back from the query's now. Follows the
 * conditions of PostHog's ee/clickhouse/queries/enterprise_cohort_query.py, with half-open windows
 * `[from, to)`. `eventFilters` (the criterion's `event_filters`) narrow the events of its entity.
 * Negation is the caller's. A bad field is a 400 naming `attr`.
 */
export function behavioralExpr(node: Node, attr: string, inputs: BehavioralInputs, eventFilters: Expr | undefined): Expr {
  const r = fieldReader(node, attr)
  const value = node.value
  const match = and(entityMatch(node.event_type, node.key, 'key', r, inputs), eventFilters)!
  const now = inputs.now
  switch (value) {
    case 'performed_event':
      return member(personsOf(and(match, between(windowOf(node, r, inputs)))!))
    case 'performed_event_multiple': {
      const times = r.positive('operator_value')
      return member(personsOf(and(match, between(windowOf(node, r, inputs)))!, binary(r.countOperator(), count(), lit(times))))
    }
    case 'performed_event_first_time': {
      const w = windowOf(node, r, inputs)
      const first: Expr = { op: 'aggregate', fn: 'min', arg: ts }
      return member(personsOf(and(match, binary('<', ts, at(w.to)))!, and(binary('>=', first, at(w.from)), binary('<', first, at(w.to)))))
    }
    case 'stopped_performing_event': {
      const { from, recent } = twoWindows(r, now)
      // Every row is in [from, now): "did it before `recent` and not since" is "the last one is before `recent`".
      return member(personsOf(and(match, between({ from, to: now }))!, binary('<', { op: 'aggregate', fn: 'max', arg: ts }, at(recent))))
    }
    case 'restarted_performing_event': {
      const { from, recent } = twoWindows(r, now)
      const inGap = and(binary('>=', ts, at(from)), binary('<', ts, at(recent)))!
      const having = and(
        binary('<', { op: 'aggregate', fn: 'min', arg: ts }, at(from)),
        binary('=', countIf(inGap), lit(0)),
        binary('>=', { op: 'aggregate', fn: 'max', arg: ts }, at(recent)),
      )
      return member(personsOf(and(match, binary('<', ts, at(now)))!, having))
    }
    case 'performed_event_regularly':
      return regularly(match, r, now)
    case 'performed_event_sequence':
      return sequence(node, match, r, inputs)
    default:
      throw validationError(attr, `Behavioral criteria of type "${String(value)}" are not supported (${BEHAVIORAL_VALUES.join(', ')}).`, 'invalid_choice')
  }
}

const ts = col('timestamp')
const person: Expr = { op: 'person_id' }
const at = (value: Date): Expr => ({ op: 'time', value })
const binary = (fn: BinaryFn, left: Expr, right: Expr): Expr => ({ op: 'binary', fn, left, right })
const between = (w: { from: Date; to: Date }): Expr => timeBetween(w.from, w.to)
const countIf = (cond: Expr): Expr => ({ op: 'aggregate', fn: 'sum', arg: { op: 'case', when: [[cond, lit(1)]], else: lit(0) } })
const member = (plan: Plan): Expr => ({ op: 'in_plan', arg: person, plan })

/** The persons (after merges) with events matching `where`, each once, kept when `having` holds. */
function personsOf(where: Expr, having?: Expr): Plan {
  return { source: fromEvents(), select: [{ alias: 'person_id', expr: person }], where: and(where, { op: 'not', arg: { op: 'is_null', arg: person } }), groupBy: [person], having }
}

// Windows reaching further back start here instead: no analytics event is older, and calendar
// arithmetic stays in years every engine (and `Date.UTC`) reads plainly.
const EARLIEST = new Date('1900-01-01T00:00:00Z')

/** The instant `n` intervals before `now`: calendar months and years, as ClickHouse's `now() - INTERVAL`. */
function ago(now: Date, n: number, unit: TimeInterval): Date {
  if (n * INTERVAL_SECONDS[unit] * 1000 >= now.getTime() - EARLIEST.getTime()) return EARLIEST
  if (unit === 'minute' || unit === 'hour') return new Date(now.getTime() - n * INTERVAL_SECONDS[unit] * 1000)
  return new Date(fromWallTime(addWall(toWallTime(now, 'UTC'), unit, -n), 'UTC').getTime() + now.getUTCMilliseconds())
}

/** `time_value`/`time_interval` back from now, or `explicit_datetime` (relative or absolute) up to `explicit_datetime_to` or now. */
function windowOf(node: Node, r: FieldReader, inputs: BehavioralInputs): { from: Date; to: Date } {
  if (typeof node.explicit_datetime === 'string' && node.explicit_datetime !== '') {
    const from = resolveInstant(node.explicit_datetime, inputs.now, inputs.timeZone, r.attr)
    const end = node.explicit_datetime_to
    const to = typeof end === 'string' && end !== '' ? resolveInstant(end, inputs.now, inputs.timeZone, r.attr) : inputs.now
    return { from, to }
  }
  return { from: ago(inputs.now, r.positive('time_value'), r.interval('time_interval')), to: inputs.now }
}

/** Stopped/restarted: the far start (`time_*`) and the recent start (`seq_time_*`), which must not be further back. */
function twoWindows(r: FieldReader, now: Date): { from: Date; recent: Date } {
  const far = { n: r.positive('time_value'), unit: r.interval('time_interval') }
  const near = { n: r.positive('seq_time_value'), unit: r.interval('seq_time_interval') }
  if (near.n * INTERVAL_SECONDS[near.unit] > far.n * INTERVAL_SECONDS[far.unit]) throw r.invalid('seq_time_value', 'must be more recent than time_value')
  return { from: ago(now, far.n, far.unit), recent: ago(now, near.n, near.unit) }
}

/** At least `min_periods` of the last `total_periods` periods of `time_value` `time_interval` have `operator` `operator_value` events. */
function regularly(match: Expr, r: FieldReader, now: Date): Expr {
  const unit = r.interval('time_interval')
  const size = r.positive('time_value')
  const times = r.positive('operator_value')
  const op = r.countOperator()
  const minPeriods = r.positive('min_periods', MAX_PERIODS)
  const totalPeriods = r.positive('total_periods', MAX_PERIODS)
  if (minPeriods > totalPeriods) throw r.invalid('min_periods', `(${minPeriods}) cannot be greater than total_periods (${totalPeriods})`)
  const hits: Expr[] = []
  for (let p = 0; p < totalPeriods; p++) {
    const inPeriod = between({ from: ago(now, size * (p + 1), unit), to: ago(now, size * p, unit) })
    hits.push({ op: 'case', when: [[binary(op, countIf(inPeriod), lit(times)), lit(1)]], else: lit(0) })
  }
  const periodsHit = hits.reduce((sum, h) => binary('+', sum, h))
  return member(personsOf(and(match, between({ from: ago(now, size * totalPeriods, unit), to: now }))!, binary('>=', periodsHit, lit(minPeriods))))
}

/**
 * The entity, then `seq_event` within `seq_time_value` `seq_time_interval` after it (strictly
 * later), both inside the window: per event of the entity, the count of sequel events in the range
 * of epoch milliseconds `(t, t + window]` after it (a window function over the person's events).
 */
function sequence(node: Node, match: Expr, r: FieldReader, inputs: BehavioralInputs): Expr {
  const w = windowOf(node, r, inputs)
  const sequel = entityMatch(node.seq_event_type, node.seq_event, 'seq_event', r, inputs)
  const withinMs = r.positive('seq_time_value') * INTERVAL_SECONDS[r.interval('seq_time_interval')] * 1000
  // The matches first, then the window over them: a window reads a plan's columns (engines without
  // window functions compute it per person from those rows, clickhouse-window-arrays.ts).
  const matched: Plan = {
    source: fromEvents(),
    select: [
      { alias: 'person', expr: person },
      { alias: 'is_first', expr: match },
      { alias: 'is_sequel', expr: { op: 'case', when: [[sequel, lit(1)]], else: lit(0) } },
      { alias: 'ms', expr: { op: 'epoch_ms', arg: ts } },
    ],
    where: and({ op: 'or', args: [match, sequel] }, between(w), { op: 'not', arg: { op: 'is_null', arg: person } }),
  }
  const events: Plan = {
    source: fromPlan(matched),
    select: [
      { alias: 'person', expr: col('person') },
      { alias: 'is_first', expr: col('is_first') },
      {
        alias: 'sequels',
        expr: { op: 'window', fn: 'sum', arg: col('is_sequel'), partitionBy: [col('person')], orderBy: [{ expr: col('ms') }], frame: { unit: 'range', start: 1, end: withinMs } },
      },
    ],
  }
  return member({ source: fromPlan(events), select: [{ alias: 'person', expr: col('person') }], where: and(col('is_first'), binary('>', col('sequels'), lit(0))), groupBy: [col('person')] })
}

function isEntityKey(type: unknown, key: unknown): boolean {
  if (type === 'actions') return (typeof key === 'number' && Number.isSafeInteger(key) && key > 0) || (typeof key === 'string' && /^[1-9]\d{0,15}$/.test(key))
  return typeof key === 'string' && key !== ''
}

/** An event by name or an action by id (its steps loaded beforehand). */
function entityMatch(type: unknown, key: unknown, field: string, r: FieldReader, inputs: BehavioralInputs): Expr {
  const typeField = field === 'key' ? 'event_type' : 'seq_event_type'
  if (type !== 'events' && type !== 'actions') throw r.invalid(typeField, 'must be events or actions')
  if (!isEntityKey(type, key)) throw r.invalid(field, type === 'actions' ? 'must be an action id' : 'must be an event name')
  if (type === 'events') return eq(col('event'), lit(key as string))
  const steps = inputs.actions.get(Number(key))
  if (!steps) throw validationError(r.attr, `Action ${String(key)} does not exist.`, 'does_not_exist')
  return { op: 'action', steps }
}

type FieldReader = ReturnType<typeof fieldReader>

/** Readers of a criterion's fields with PostHog's checks (`parse_and_validate_positive_integer`, `validate_interval`). */
function fieldReader(node: Node, attr: string) {
  const invalid = (field: string, problem: string) =>
    validationError(attr, `Behavioral criterion "${String(node.value)}": ${field} ${problem}.`, 'invalid_input')
  return {
    attr,
    invalid,
    positive(field: string, max = MAX_TIME_VALUE): number {
      const v = node[field]
      const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v
      if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0 || n > max) throw invalid(field, `must be a whole number from 1 to ${max}`)
      return n
    },
    interval(field: string): TimeInterval {
      const v = node[field]
      if (typeof v !== 'string' || !Object.hasOwn(INTERVAL_SECONDS, v)) throw invalid(field, `must be one of ${Object.keys(INTERVAL_SECONDS).join(', ')}`)
      return v as TimeInterval
    },
    countOperator(): BinaryFn {
      const v = node.operator ?? 'exact'
      if (typeof v !== 'string' || !Object.hasOwn(COUNT_OPERATORS, v)) throw invalid('operator', `must be one of ${Object.keys(COUNT_OPERATORS).join(', ')}`)
      return COUNT_OPERATORS[v]!
    },
  }
}
