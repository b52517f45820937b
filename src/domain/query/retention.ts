import { validationError } from '../../shared/errors.ts'
import { nextBucket, shiftInstant, startOfInterval, type DateRangeInput, type Interval, type ResolvedRange } from './date-range.ts'
import { readArray, readChoice, readFlag, readInteger, readNode, readText, type Node } from './query-fields.ts'
import { readDateRange, readSeries, type Series } from './trends-query.ts'

const PERIODS = ['Hour', 'Day', 'Week', 'Month'] as const
export type RetentionPeriod = (typeof PERIODS)[number]
const INTERVAL: Record<RetentionPeriod, Interval> = { Hour: 'hour', Day: 'day', Week: 'week', Month: 'month' }
const TYPES = ['retention_recurring', 'retention_first_time', 'retention_first_ever_occurrence'] as const

/**
 * How a person enters a cohort: `recurring`, in every period they did the target event;
 * `first_time`, in the period of their first target event ever that matches the filters;
 * `first_ever`, in the period of their first target event ever (entity filters aside), only when
 * that event also matches the entity's filters.
 */
export type CohortMode = 'recurring' | 'first_time' | 'first_ever'

export interface RetentionQuery {
  target: Series
  returning: Series
  period: RetentionPeriod
  interval: Interval
  /** Values per cohort row (PostHog's `lookahead`): the cohort's own period and the ones after it. */
  totalIntervals: number
  mode: CohortMode
  /** Value k counts persons who came back in period k or any later one (PostHog's `cumulative`). */
  cumulative: boolean
  dateRange: DateRangeInput | undefined
  properties: unknown
  /** Counts groups of this type instead of persons (`aggregation_group_type_index`). */
  groupTypeIndex: number | null
}

/** PostHog's default entity when `targetEntity` / `returningEntity` is absent. */
const PAGEVIEW = { id: '$pageview', type: 'events' }

/** Reads a `RetentionQuery` node (PostHog's `RetentionFilter`); errors name the field under `query.`. */
export function readRetentionQuery(node: Node, attr = 'query'): RetentionQuery {
  const fAttr = `${attr}.retentionFilter`
  const f = readNode(node.retentionFilter, fAttr)
  const period = readChoice(f.period, `${fAttr}.period`, PERIODS, 'Day')
  const type = readChoice(f.retentionType, `${fAttr}.retentionType`, TYPES, 'retention_recurring')
  if ((readInteger(f.minimumOccurrences, `${fAttr}.minimumOccurrences`, { min: 1, fallback: 1 }) ?? 1) > 1) {
    throw validationError(`${fAttr}.minimumOccurrences`, 'Retention with a minimum number of occurrences above 1 is not supported yet.', 'invalid_input')
  }
  readChoice(f.timeWindowMode, `${fAttr}.timeWindowMode`, ['strict_calendar_dates'] as const, 'strict_calendar_dates')
  if (node.breakdownFilter !== undefined && node.breakdownFilter !== null) {
    const b = readNode(node.breakdownFilter, `${attr}.breakdownFilter`)
    if ((b.breakdown ?? null) !== null || readArray(b.breakdowns, `${attr}.breakdownFilter.breakdowns`, { optional: true }).length > 0) {
      throw validationError(`${attr}.breakdownFilter`, 'Retention breakdowns are not supported yet.', 'invalid_input')
    }
  }
  if (node.properties !== undefined && node.properties !== null && !Array.isArray(node.properties)) readNode(node.properties, `${attr}.properties`)
  return {
    target: readEntity(f.targetEntity ?? PAGEVIEW, `${fAttr}.targetEntity`),
    returning: readEntity(f.returningEntity ?? PAGEVIEW, `${fAttr}.returningEntity`),
    period,
    interval: INTERVAL[period],
    // PostHog's schema default (8: the cohort's period and the 7 after it).
    totalIntervals: readInteger(f.totalIntervals, `${fAttr}.totalIntervals`, { min: 1, max: 64, fallback: 8 })!,
    mode: type === 'retention_recurring' ? 'recurring' : type === 'retention_first_time' ? 'first_time' : 'first_ever',
    cumulative: readFlag(f.cumulative, `${fAttr}.cumulative`),
    dateRange: readDateRange(node.dateRange, `${attr}.dateRange`),
    properties: node.properties,
    groupTypeIndex: readInteger(node.aggregation_group_type_index, `${attr}.aggregation_group_type_index`, { min: 0, max: 4 }) ?? null,
  }
}

/**
 * A retention entity `{id, type: 'events'|'actions', name, properties}` (PostHog's `RetentionEntity`;
 * `kind: 'EventsNode'|'ActionsNode'` may stand for `type`) as a series. An event `id` of null is
 * any event; an action `id` is the action's number.
 */
function readEntity(v: unknown, attr: string): Series {
  const node = readNode(v, attr)
  const kind = node.kind === undefined || node.kind === null ? undefined : readChoice(node.kind, `${attr}.kind`, ['EventsNode', 'ActionsNode'] as const)
  const type = readChoice(node.type ?? (kind === 'ActionsNode' ? 'actions' : kind === 'EventsNode' ? 'events' : undefined), `${attr}.type`, ['events', 'actions'] as const, 'events')
  const common = { name: node.name, custom_name: node.custom_name, properties: node.properties }
  if (type === 'actions') return readSeries({ ...common, kind: 'ActionsNode', id: node.id }, attr)
  const id = node.id !== undefined ? node.id : node.event
  if (id !== undefined && id !== null && typeof id !== 'string') throw validationError(`${attr}.id`, 'An event name (a string) or null is required.', 'invalid_input')
  return readSeries({ ...common, kind: 'EventsNode', event: readText(id, `${attr}.id`, { nullable: true }) ?? null }, attr)
}

/**
 * The date range as PostHog's retention reads it (`QueryDateRangeWithIntervals`): the end goes to
 * the end of the period holding `date_to` (now by default); the start is the start of the period
 * holding `date_from`, or without one, `totalIntervals` periods back from the end.
 * `base` is the range resolved from the input as for other kinds.
 */
export function retentionRange(base: ResolvedRange, q: RetentionQuery): ResolvedRange {
  const { interval, timeZone } = base
  const lastStart = startOfInterval(new Date(base.to.getTime() - 1), interval, timeZone)
  const to = nextBucket(lastStart, interval, timeZone)
  const from = q.dateRange?.date_from ? base.from : shiftInstant(lastStart, interval, -(q.totalIntervals - 1), timeZone)
  const buckets: Date[] = []
  for (let b = from; b.getTime() < to.getTime(); b = nextBucket(b, interval, timeZone)) {
    buckets.push(b)
    if (buckets.length > 64) {
      throw validationError('query.dateRange', 'Retention covers at most 64 periods: choose a shorter range or a longer period.', 'invalid_input')
    }
  }
  return { from, to, interval, timeZone, buckets }
}
