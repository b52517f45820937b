import { validationError } from '../../../shared/errors.ts'
import type { DateRangeInput, Interval } from '../date-range.ts'
import { readArray, readChoice, readFlag, readInteger, readNode, type Node } from '../query-fields.ts'
import { FUNNEL_FIRST_TIME_MATHS, MATHS, readBreakdown, readDateRange, readInterval, readSeries, type Breakdown, type Series } from '../trends-query.ts'
import type { FunnelAttribution } from './funnel-plan.ts'

export const FUNNEL_ORDERS = ['ordered', 'strict', 'unordered'] as const
export type FunnelOrder = (typeof FUNNEL_ORDERS)[number]
export const FUNNEL_VIZ_TYPES = ['steps', 'time_to_convert', 'trends'] as const
export type FunnelVizType = (typeof FUNNEL_VIZ_TYPES)[number]
const ATTRIBUTIONS = ['first_touch', 'last_touch', 'all_events', 'step'] as const
const WINDOW_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month'] as const
type WindowUnit = (typeof WINDOW_UNITS)[number]
/** PostHog's conversion window units in seconds (a month is 30 days, as its funnels count it). */
const UNIT_SECONDS: Record<WindowUnit, number> = { second: 1, minute: 60, hour: 3600, day: 86_400, week: 604_800, month: 2_592_000 }

/** Maths a funnel step takes: the trends maths as before, and PostHog's `FunnelMathType` first-time maths. */
const STEP_MATHS = [...MATHS, ...FUNNEL_FIRST_TIME_MATHS]

/** An event or action that, between two steps, takes a person out of the funnel. */
export interface FunnelExclusion {
  series: Series
  /** The exclusion applies after this step (0-based) is reached and before `toStep` is. */
  fromStep: number
  toStep: number
}

export interface FunnelsQuery {
  steps: Series[]
  dateRange: DateRangeInput | undefined
  properties: unknown
  /** PostHog's `filterTestAccounts`: the project's `test_account_filters` apply to every event read. */
  filterTestAccounts: boolean
  breakdown: Breakdown | null
  /** Which value a person counts under when their events carry several. */
  attribution: FunnelAttribution
  /** Groups of this type go through the funnel instead of persons (`aggregation_group_type_index`). */
  groupTypeIndex: number | null
  /** Funnel trends' interval. */
  interval: Interval
  order: FunnelOrder
  vizType: FunnelVizType
  windowMs: number
  exclusions: FunnelExclusion[]
  /** Steps time to convert and trends measure between (0-based; `toStep` defaults to the last). */
  fromStep: number
  toStep: number
  binCount: number | null
}

/** Reads a `FunnelsQuery` node (PostHog's `FunnelsQuery` + `FunnelsFilter`); errors name the field under `query.`. */
export function readFunnelsQuery(node: Node, attr = 'query'): FunnelsQuery {
  const steps = readArray(node.series, `${attr}.series`).map((s, i) => readSeries(s, `${attr}.series.${i}`, { maths: STEP_MATHS }))
  if (steps.length === 0) throw validationError(`${attr}.series`, 'A funnel needs at least one step.', 'required')
  if (steps.length > 20) throw validationError(`${attr}.series`, 'A funnel has at most 20 steps.', 'max_length')
  const f = readNode(node.funnelsFilter, `${attr}.funnelsFilter`, { optional: true }) ?? {}
  const fAttr = `${attr}.funnelsFilter`
  const last = steps.length - 1
  const windowCount = readInteger(f.funnelWindowInterval, `${fAttr}.funnelWindowInterval`, { min: 1, max: 100_000, fallback: 14 })!
  const unit = readChoice(f.funnelWindowIntervalUnit, `${fAttr}.funnelWindowIntervalUnit`, WINDOW_UNITS, 'day')
  const fromStep = readInteger(f.funnelFromStep, `${fAttr}.funnelFromStep`, { min: 0, max: Math.max(0, last - 1), fallback: 0 })!
  const toStep = readInteger(f.funnelToStep, `${fAttr}.funnelToStep`, { min: Math.min(fromStep + 1, last), max: last, fallback: last })!
  const order = readChoice(f.funnelOrderType, `${fAttr}.funnelOrderType`, FUNNEL_ORDERS, 'ordered')
  const attribution = readAttribution(f, fAttr, last, order)
  const vizType = readChoice(f.funnelVizType, `${fAttr}.funnelVizType`, FUNNEL_VIZ_TYPES, 'steps')
  const exclusions = readArray(f.exclusions, `${fAttr}.exclusions`, { optional: true }).map((e, i) => readExclusion(e, `${fAttr}.exclusions.${i}`, last))
  for (const [i, x] of exclusions.entries()) {
    if (order === 'unordered' && (x.fromStep !== 0 || x.toStep !== last)) {
      throw validationError(`${fAttr}.exclusions.${i}`, 'Partial exclusions are not allowed in unordered funnels: exclude from the first step to the last.', 'invalid_input')
    }
  }
  const breakdown = readBreakdown(node.breakdownFilter, `${attr}.breakdownFilter`)
  return {
    steps,
    dateRange: readDateRange(node.dateRange, `${attr}.dateRange`),
    properties: node.properties,
    filterTestAccounts: readFlag(node.filterTestAccounts, `${attr}.filterTestAccounts`),
    breakdown,
    attribution,
    groupTypeIndex: readInteger(node.aggregation_group_type_index, `${attr}.aggregation_group_type_index`, { min: 0, max: 4 }) ?? null,
    interval: readInterval(node.interval, `${attr}.interval`),
    order,
    vizType,
    windowMs: windowCount * UNIT_SECONDS[unit] * 1000,
    exclusions,
    fromStep,
    toStep,
    binCount: readInteger(f.binCount, `${fAttr}.binCount`, { min: 1, max: 90 }) ?? null,
  }
}

/** `breakdownAttributionType` (default first touch) and, for `step`, `breakdownAttributionValue`. */
function readAttribution(f: Node, fAttr: string, last: number, order: FunnelOrder): FunnelAttribution {
  const type = readChoice(f.breakdownAttributionType, `${fAttr}.breakdownAttributionType`, ATTRIBUTIONS, 'first_touch')
  if (type !== 'step') return { type }
  const step = readInteger(f.breakdownAttributionValue, `${fAttr}.breakdownAttributionValue`, { min: 0, max: last, fallback: 0 })!
  if (order === 'unordered' && step !== 0) {
    throw validationError(`${fAttr}.breakdownAttributionValue`, 'Only the first step can be used for breakdown attribution in unordered funnels.', 'invalid_input')
  }
  return { type, step }
}

function readExclusion(v: unknown, attr: string, last: number): FunnelExclusion {
  const node = readNode(v, attr)
  const series = readSeries({ ...node, kind: node.kind === 'FunnelExclusionActionsNode' ? 'ActionsNode' : node.kind === 'FunnelExclusionEventsNode' || node.kind === undefined ? 'EventsNode' : node.kind }, attr)
  const fromStep = readInteger(node.funnelFromStep, `${attr}.funnelFromStep`, { min: 0, max: Math.max(0, last - 1), fallback: 0 })!
  const toStep = readInteger(node.funnelToStep, `${attr}.funnelToStep`, { min: fromStep + 1, max: last, fallback: last })!
  if (last === 0) throw validationError(attr, 'Exclusions need a funnel of at least two steps.', 'invalid_input')
  return { series, fromStep, toStep }
}
