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
  /** PostHog's `filterTestAccounts`: the project's `test_account_filters` apply to every event read. */
  filterTestAccounts: boolean
  /** Counts groups of this type instead of persons (`aggregation_group_type_index`). */
  groupTypeIndex: number | null
  /**
   * A period after the cohort's counts as a return only with at least this many returning events
   * in it (PostHog's `minimumOccurrences`); the cohort's own period (value 0) never needs them.
   */
  minimumOccurrences: number
  /**
   * `calendar`: periods of the project's calendar (`strict_calendar_dates`). `rolling`
   * (`24_hour_windows`): each actor's one cohort starts at their first target event, and value k
   * counts returns k whole windows after it (see `retention-window-plan.ts`).
   */
  windows: 'calendar' | 'rolling'
}

/** PostHog's default entity when `targetEntity` / `returningEntity` is absent. */
const PAGEVIEW = { id: '$pageview', type: 'events' }

/** Reads a `RetentionQuery` node (PostHog's `RetentionFilter`); errors name the field under `query.`. */
export function readRetentionQuery(node: Node, attr = 'query'): RetentionQuery {
  const fAttr = `${attr}.retentionFilter`
  const f = readNode(node.retentionFilter, fAttr)
  const period = readChoice(f.period, `${fAttr}.period`, PERIODS, 'Day')
  const type = readChoice(f.retentionType, `${fAttr}.retentionType`, TYPES, 'retention_recurring')
  const windows = readChoice(f.timeWindowMode, `${fAttr}.timeWindowMode`, ['strict_calendar_dates', '24_hour_windows'] as const, 'strict_calendar_dates')
  const cumulative = readFlag(f.cumulative, `${fAttr}.cumulative`)
  // PostHog's runner refuses the pair (RetentionQueryRunner.validate).
  if (cumulative && windows === '24_hour_windows') throw validationError(`${fAttr}.cumulative`, 'Cumulative retention is not supported for 24 hour windows.', 'invalid_input')
  refuseUnsupported(f, fAttr)
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
    cumulative,
    dateRange: readDateRange(node.dateRange, `${attr}.dateRange`),
    properties: node.properties,
    filterTestAccounts: readFlag(node.filterTestAccounts, `${attr}.filterTestAccounts`),
    groupTypeIndex: readInteger(node.aggregation_group_type_index, `${attr}.aggregation_group_type_index`, { min: 0, max: 4 }) ?? null,
    // PostHog reads `minimumOccurrences or 1` and compares counts with `>=`: 0 and below mean 1.
    minimumOccurrences: Math.max(1, readInteger(f.minimumOccurrences, `${fAttr}.minimumOccurrences`, { fallback: 1 })!),
    windows: windows === '24_hour_windows' ? 'rolling' : 'calendar',
  }
}

/**
 * The `RetentionFilter` fields that change the answer and that Tally does not compute yet: a 400
 * naming each, never a grid that ignores it. Display-only fields (`display`, `dashboardDisplay`,
 * `showTrendLines`, `selectedInterval`, `cohortLabelStartIndex`, `goalLines`, the legacy
 * `showMean`) are ignored; `meanRetentionCalculation` and `retentionReference`, which only the
 * client's table uses, are checked against PostHog's choices and otherwise ignored.
 */
function refuseUnsupported(f: Node, fAttr: string): void {
  readChoice(f.meanRetentionCalculation, `${fAttr}.meanRetentionCalculation`, ['simple', 'weighted', 'none'] as const, 'simple')
  readChoice(f.retentionReference, `${fAttr}.retentionReference`, ['total', 'previous'] as const, 'total')
  const aggregation = readChoice(f.aggregationType, `${fAttr}.aggregationType`, ['count', 'sum', 'avg'] as const, 'count')
  // PostHog aggregates a property only when one is named; without it sum and avg count actors.
  if (aggregation !== 'count' && readText(f.aggregationProperty, `${fAttr}.aggregationProperty`, { optional: true })) {
    throw validationError(`${fAttr}.aggregationType`, 'Retention summing or averaging a property is not supported yet: only count is.', 'invalid_input')
  }
  if (readArray(f.retentionCustomBrackets, `${fAttr}.retentionCustomBrackets`, { optional: true }).length > 0) {
    throw validationError(`${fAttr}.retentionCustomBrackets`, 'Retention with custom brackets is not supported yet.', 'invalid_input')
  }
  if (readFlag(f.customAggregationTarget, `${fAttr}.customAggregationTarget`)) {
    throw validationError(`${fAttr}.customAggregationTarget`, 'Retention with a custom aggregation target (data warehouse series) is not supported.', 'invalid_input')
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
export function retentionRange(base: ResolvedRange, q: RetentionQuery, attr = 'query'): ResolvedRange {
  const { interval, timeZone } = base
  const lastStart = startOfInterval(new Date(base.to.getTime() - 1), interval, timeZone)
  const to = nextBucket(lastStart, interval, timeZone)
  const from = q.dateRange?.date_from ? base.from : shiftInstant(lastStart, interval, -(q.totalIntervals - 1), timeZone)
  const buckets: Date[] = []
  for (let b = from; b.getTime() < to.getTime(); b = nextBucket(b, interval, timeZone)) {
    buckets.push(b)
    if (buckets.length > 64) {
      throw validationError(`${attr}.dateRange`, 'Retention covers at most 64 periods: choose a shorter range or a longer period.', 'invalid_input')
    }
  }
  return { from, to, interval, timeZone, buckets }
}
