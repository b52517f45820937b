import { validationError } from '../../shared/errors.ts'
import { INTERVALS, type DateRangeInput, type Interval } from './date-range.ts'
import { readArray, readChoice, readFlag, readInteger, readNode, readText, type Node } from './query-fields.ts'
import { checkLength, QUERY_BOUNDS } from './query-bounds.ts'

export const MATHS = [
  'total', 'dau', 'weekly_active', 'monthly_active', 'unique_group',
  'sum', 'avg', 'min', 'max', 'median', 'p75', 'p90', 'p95', 'p99',
] as const
/**
 * PostHog's `FunnelMathType`s beyond `total`: a step done only by the actor's first event ever of the
 * step's event or action (`first_time_for_user`), or of the step with its filters (`..._with_filters`).
 */
export const FUNNEL_FIRST_TIME_MATHS = ['first_time_for_user', 'first_time_for_user_with_filters'] as const
export type MathType = (typeof MATHS)[number] | (typeof FUNNEL_FIRST_TIME_MATHS)[number]
export const PROPERTY_MATHS: readonly MathType[] = ['sum', 'avg', 'min', 'max', 'median', 'p75', 'p90', 'p95', 'p99']

/** Displays that show one number per series over the whole range (PostHog's aggregated displays). */
export const AGGREGATED_DISPLAYS = ['BoldNumber', 'ActionsPie', 'ActionsTable', 'WorldMap', 'ActionsBarValue']

/** One series of a trends/stickiness/lifecycle query: an event (null = all events) or an action. */
export interface Series {
  kind: 'EventsNode' | 'ActionsNode'
  /** Event name (EventsNode; null = all events) or action id (ActionsNode). */
  event: string | null
  actionId: number | null
  name: string | null
  customName: string | null
  math: MathType
  mathProperty: string | null
  mathGroupTypeIndex: number | null
  properties: unknown
  /** The node as sent, echoed in each result's `action`. */
  raw: Node
}

/** One property a breakdown reads. */
export interface BreakdownPart {
  /** Property key. */
  key: string
  type: 'event' | 'person' | 'group'
  /** Group breakdowns: the group type's index (the event's `$group_<index>` names the group). */
  groupTypeIndex: number | null
  /**
   * Group breakdowns: each group key with its value of the property, from the groups store (the
   * runner fills it before planning; events carry group keys, not group properties).
   */
  groupValues?: ReadonlyArray<readonly [string, string]>
}

/**
 * A breakdown by one property (`breakdown`) or several (`breakdowns`, up to 3: each value is then
 * the list of the parts' values, PostHog's multiple breakdowns).
 */
export interface Breakdown {
  parts: BreakdownPart[]
  multiple: boolean
  limit: number
  /** `breakdown_hide_other_aggregation`: leave the "other" row out of the results. */
  hideOther: boolean
}

/** Separates the parts of a multiple breakdown's value inside the store's rows (never in results). */
export const BREAKDOWN_PART_SEPARATOR = '\u001f'

const BREAKDOWN_TYPES = ['event', 'person', 'group', 'cohort', 'session', 'hogql', 'data_warehouse', 'data_warehouse_person_property', 'event_metadata'] as const

function readBreakdownPart(key: unknown, type: unknown, groupTypeIndex: unknown, attr: string, fields: { key: string; type: string; index: string }): BreakdownPart {
  const kind = readChoice(type, `${attr}.${fields.type}`, BREAKDOWN_TYPES, 'event')
  if (kind !== 'event' && kind !== 'person' && kind !== 'group') {
    throw validationError(`${attr}.${fields.type}`, `Breakdowns of type "${kind}" are not supported yet (event, person, group).`, 'invalid_choice')
  }
  const index = readInteger(groupTypeIndex, `${attr}.${fields.index}`, { min: 0, max: 4 }) ?? null
  if (kind === 'group' && index === null) throw validationError(`${attr}.${fields.index}`, 'A group breakdown needs its group type index.', 'required')
  return { key: readText(key, `${attr}.${fields.key}`)!, type: kind, groupTypeIndex: kind === 'group' ? index : null }
}

export interface TrendsQuery {
  series: Series[]
  interval: Interval
  dateRange: DateRangeInput | undefined
  properties: unknown
  /** PostHog's `filterTestAccounts`: the project's `test_account_filters` apply to every event read. */
  filterTestAccounts: boolean
  breakdown: Breakdown | null
  display: string
  formula: string | null
  compare: boolean
}

/** Reads one series node (`EventsNode`/`ActionsNode`); `attr` is its path (`query.series.0`). */
export function readSeries(v: unknown, attr: string, opts: { maths: readonly MathType[] } = { maths: MATHS }): Series {
  const node = readNode(v, attr)
  const kind = readChoice(node.kind, `${attr}.kind`, ['EventsNode', 'ActionsNode'] as const)
  const math = readChoice(node.math, `${attr}.math`, opts.maths, 'total')
  const mathProperty = readText(node.math_property, `${attr}.math_property`, { optional: true }) ?? null
  if (PROPERTY_MATHS.includes(math) && !mathProperty) throw validationError(`${attr}.math_property`, `math "${math}" needs a math_property.`, 'required')
  const mathGroupTypeIndex = readInteger(node.math_group_type_index, `${attr}.math_group_type_index`, { min: 0, max: 4 }) ?? null
  if (math === 'unique_group' && mathGroupTypeIndex === null) throw validationError(`${attr}.math_group_type_index`, 'math "unique_group" needs a math_group_type_index.', 'required')
  const event = kind === 'EventsNode' ? (readText(node.event, `${attr}.event`, { nullable: true }) ?? null) : null
  const actionId = kind === 'ActionsNode' ? readInteger(node.id, `${attr}.id`, { min: 1 }) ?? null : null
  if (kind === 'ActionsNode' && actionId === null) throw validationError(`${attr}.id`, 'This field is required.', 'required')
  if (node.properties !== undefined && node.properties !== null) readArray(node.properties, `${attr}.properties`)
  return {
    kind, event, actionId, math, mathProperty, mathGroupTypeIndex, raw: node,
    name: readText(node.name, `${attr}.name`, { nullable: true }) ?? null,
    customName: readText(node.custom_name, `${attr}.custom_name`, { nullable: true }) ?? null,
    properties: [...(Array.isArray(node.properties) ? node.properties : []), ...(Array.isArray(node.fixedProperties) ? node.fixedProperties : [])],
  }
}

export function readDateRange(v: unknown, attr: string): DateRangeInput | undefined {
  const node = readNode(v, attr, { optional: true })
  if (!node) return undefined
  return {
    date_from: readText(node.date_from, `${attr}.date_from`, { nullable: true }),
    date_to: readText(node.date_to, `${attr}.date_to`, { nullable: true }),
    explicitDate: readFlag(node.explicitDate, `${attr}.explicitDate`),
  }
}

export function readInterval(v: unknown, attr: string): Interval {
  return readChoice(v, attr, INTERVALS, 'day')
}

/** Reads PostHog's `breakdownFilter` (one event or person property; 25 values by default, the rest as "other"). */
export function readBreakdown(v: unknown, attr: string): Breakdown | null {
  const node = readNode(v, attr, { optional: true })
  if (!node) return null
  const limit = readInteger(node.breakdown_limit, `${attr}.breakdown_limit`, { min: 1, max: 1000, fallback: 25 })!
  const hideOther = readFlag(node.breakdown_hide_other_aggregation, `${attr}.breakdown_hide_other_aggregation`)
  const many = readArray(node.breakdowns, `${attr}.breakdowns`, { optional: true })
  if (many.length > 0) {
    if (many.length > 3) throw validationError(`${attr}.breakdowns`, 'At most 3 breakdowns.', 'max_length')
    const parts = many.map((b, i) => {
      const item = readNode(b, `${attr}.breakdowns.${i}`)
      return readBreakdownPart(item.property, item.type, item.group_type_index, `${attr}.breakdowns.${i}`, { key: 'property', type: 'type', index: 'group_type_index' })
    })
    return { parts, multiple: true, limit, hideOther }
  }
  if (node.breakdown === undefined || node.breakdown === null) return null
  const fields = { key: 'breakdown', type: 'breakdown_type', index: 'breakdown_group_type_index' }
  if (Array.isArray(node.breakdown)) {
    // A list of properties (PostHog's filter-to-query conversion writes `["$browser"]`): one is the
    // same as the property alone; several are a multiple breakdown of parts of the same type.
    if (node.breakdown.length === 0) return null
    if (node.breakdown.length > 3) throw validationError(`${attr}.breakdown`, 'At most 3 breakdown properties.', 'max_length')
    const parts = node.breakdown.map((key, i) => readBreakdownPart(key, node.breakdown_type, node.breakdown_group_type_index, attr, { ...fields, key: `breakdown.${i}` }))
    return { parts, multiple: parts.length > 1, limit, hideOther }
  }
  const part = readBreakdownPart(node.breakdown, node.breakdown_type, node.breakdown_group_type_index, attr, fields)
  return { parts: [part], multiple: false, limit, hideOther }
}

/** Reads a `TrendsQuery` node; errors name the field under `query.` as PostHog's schema validation does. */
export function readTrendsQuery(node: Node, attr = 'query'): TrendsQuery {
  const rawSeries = readArray(node.series, `${attr}.series`)
  checkLength(rawSeries, QUERY_BOUNDS.series, `${attr}.series`, 'series')
  const series = rawSeries.map((s, i) => readSeries(s, `${attr}.series.${i}`))
  if (series.length === 0) throw validationError(`${attr}.series`, 'At least one series is required.', 'required')
  const trendsFilter = readNode(node.trendsFilter, `${attr}.trendsFilter`, { optional: true }) ?? {}
  const compareFilter = readNode(node.compareFilter, `${attr}.compareFilter`, { optional: true }) ?? {}
  const formulas = Array.isArray(trendsFilter.formulas) ? trendsFilter.formulas : []
  const formula = readText(trendsFilter.formula ?? formulas[0], `${attr}.trendsFilter.formula`, { nullable: true }) || null
  return {
    series,
    interval: readInterval(node.interval, `${attr}.interval`),
    dateRange: readDateRange(node.dateRange, `${attr}.dateRange`),
    properties: node.properties,
    filterTestAccounts: readFlag(node.filterTestAccounts, `${attr}.filterTestAccounts`),
    breakdown: readBreakdown(node.breakdownFilter, `${attr}.breakdownFilter`),
    display: readText(trendsFilter.display, `${attr}.trendsFilter.display`, { nullable: true }) ?? 'ActionsLineGraph',
    formula,
    compare: readFlag(compareFilter.compare, `${attr}.compareFilter.compare`),
  }
}
