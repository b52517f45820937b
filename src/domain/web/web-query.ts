import type { DateRangeInput } from '../query/date-range.ts'
import { readArray, readChoice, readFlag, readInteger, readNode, readText, type Node } from '../query/query-fields.ts'
import { validationError } from '../../shared/errors.ts'

/** PostHog's `WebStatsBreakdown` values (schema.py), in its order. */
export const WEB_STATS_BREAKDOWNS = [
  'Page', 'InitialPage', 'ExitPage', 'ExitClick', 'PreviousPage', 'ScreenName', 'InitialChannelType', 'InitialReferringDomain',
  'InitialUTMSource', 'InitialUTMCampaign', 'InitialUTMMedium', 'InitialUTMTerm', 'InitialUTMContent', 'InitialUTMSourceMediumCampaign',
  'Browser', 'OS', 'Viewport', 'DeviceType', 'Country', 'Region', 'City', 'Timezone', 'Language', 'FrustrationMetrics',
] as const
export type WebStatsBreakdown = (typeof WEB_STATS_BREAKDOWNS)[number]

/** PostHog's `WebAnalyticsOrderByFields` Tally's table answers (the conversion ones with a `conversionGoal`). */
export const WEB_ORDER_FIELDS = ['Visitors', 'Views', 'BounceRate', 'TotalConversions', 'UniqueConversions', 'ConversionRate'] as const
export type WebOrderField = (typeof WEB_ORDER_FIELDS)[number]

/** PostHog's `conversionGoal`: an action (`ActionConversionGoal`) or a custom event (`CustomEventConversionGoal`). */
export type ConversionGoal = { actionId: number } | { customEventName: string }

/** What the web analytics kinds share (PostHog's `WebAnalyticsQueryBase`). */
export interface WebQueryBase {
  dateRange: DateRangeInput | undefined
  properties: unknown
  compare: boolean
  filterTestAccounts: boolean
  conversionGoal: ConversionGoal | null
}

function readConversionGoal(v: unknown, attr: string): ConversionGoal | null {
  const node = readNode(v, attr, { optional: true })
  if (!node) return null
  if (node.actionId !== undefined && node.actionId !== null) return { actionId: readInteger(node.actionId, `${attr}.actionId`, { min: 1 })! }
  if (node.customEventName !== undefined && node.customEventName !== null) return { customEventName: readText(node.customEventName, `${attr}.customEventName`)! }
  throw validationError(attr, 'A conversion goal has an actionId or a customEventName.', 'invalid_input')
}

export interface WebStatsTableQuery extends WebQueryBase {
  breakdownBy: WebStatsBreakdown
  includeBounceRate: boolean
  limit: number
  offset: number
  orderBy: { field: WebOrderField; direction: 'ASC' | 'DESC' } | null
}

/** PostHog's `DEFAULT_RETURNED_ROWS`, the paginator's limit when a query has none. */
export const DEFAULT_LIMIT = 100
const MAX_LIMIT = 10_000

/** The fields every web analytics kind reads; unknown extras are ignored, as PostHog's pydantic models with defaults do. */
export function readWebQueryBase(node: Node, attr = 'query'): WebQueryBase {
  const dateRange = readNode(node.dateRange, `${attr}.dateRange`, { optional: true }) as DateRangeInput | undefined
  const compareFilter = readNode(node.compareFilter, `${attr}.compareFilter`, { optional: true })
  if (compareFilter && typeof compareFilter.compare_to === 'string') {
    throw validationError(`${attr}.compareFilter.compare_to`, 'Comparing with a chosen period (compare_to) is not supported yet: use compare for the previous period.', 'invalid_input')
  }
  return {
    dateRange,
    properties: node.properties === undefined || node.properties === null ? [] : readArray(node.properties, `${attr}.properties`),
    compare: readFlag(compareFilter?.compare, `${attr}.compareFilter.compare`),
    filterTestAccounts: readFlag(node.filterTestAccounts, `${attr}.filterTestAccounts`),
    conversionGoal: readConversionGoal(node.conversionGoal, `${attr}.conversionGoal`),
  }
}

/** `WebStatsTableQuery`'s fields (`breakdownBy` required, as in PostHog's schema). */
export function readWebStatsTableQuery(node: Node, attr = 'query'): WebStatsTableQuery {
  const base = readWebQueryBase(node, attr)
  const breakdownBy = readChoice(node.breakdownBy, `${attr}.breakdownBy`, WEB_STATS_BREAKDOWNS)
  let orderBy: WebStatsTableQuery['orderBy'] = null
  if (node.orderBy !== undefined && node.orderBy !== null) {
    const pair = readArray(node.orderBy, `${attr}.orderBy`)
    if (pair.length !== 2) throw validationError(`${attr}.orderBy`, 'Expected [field, direction].', 'invalid_input')
    orderBy = {
      field: readChoice(pair[0], `${attr}.orderBy.0`, WEB_ORDER_FIELDS),
      direction: readChoice(pair[1], `${attr}.orderBy.1`, ['ASC', 'DESC'] as const),
    }
  }
  return {
    ...base,
    breakdownBy,
    includeBounceRate: readFlag(node.includeBounceRate, `${attr}.includeBounceRate`),
    limit: readInteger(node.limit, `${attr}.limit`, { min: 1, max: MAX_LIMIT }) ?? DEFAULT_LIMIT,
    offset: readInteger(node.offset, `${attr}.offset`, { min: 0, max: 1_000_000 }) ?? 0,
    orderBy,
  }
}
