/**
 * The Web analytics page's state (date range, compare, test accounts, property filters), kept in the
 * address bar so a filtered view can be shared and survives a reload, and the PostHog queries it
 * stands for (schema-general.ts: WebOverviewQuery, WebStatsTableQuery, TrendsQuery).
 */
type Json = Record<string, unknown>

/**
 * One filter on the page: PostHog's EventPropertyFilter / SessionPropertyFilter. `exact` holds one
 * value or several (any of them), `is_not_set` none, `regex` one pattern.
 */
export interface WebFilter { key: string; type: 'event' | 'session' | 'person'; operator: 'exact' | 'is_not_set' | 'regex'; value: string[] }

/** PostHog's `conversionGoal` of the overview: an action, or a custom event's name. */
export type WebGoal = { actionId: number } | { customEventName: string }

export interface WebState {
  dateFrom: string
  compare: boolean
  filterTestAccounts: boolean
  filters: WebFilter[]
  goal: WebGoal | null
}

/** A goal as one text (`action:12`, `event:signed up`; '' for none): the picker's value and the address bar's. */
export const goalValue = (g: WebGoal | null): string => (g === null ? '' : 'actionId' in g ? `action:${g.actionId}` : `event:${g.customEventName}`)

/** The goal a `goalValue` text stands for; null for none or anything unreadable. */
export function goalOf(value: string | null): WebGoal | null {
  const action = /^action:(\d+)$/.exec(value ?? '')
  if (action) return { actionId: Number(action[1]) }
  return value?.startsWith('event:') && value.length > 'event:'.length ? { customEventName: value.slice('event:'.length) } : null
}

/** PostHog's date options of the web analytics page (its default is the last 7 days). */
export const DATE_OPTIONS: [string, string][] = [
  ['dStart', 'Today'], ['-24h', 'Last 24 hours'], ['-7d', 'Last 7 days'], ['-14d', 'Last 14 days'],
  ['-30d', 'Last 30 days'], ['-90d', 'Last 90 days'], ['-180d', 'Last 180 days'],
]

export const DEFAULT_STATE: WebState = { dateFrom: '-7d', compare: true, filterTestAccounts: false, filters: [], goal: null }

const FILTER_TYPES = new Set(['event', 'session', 'person'])
const OPERATORS = new Set(['exact', 'is_not_set', 'regex'])

/** The state from the address bar's query string; anything unreadable falls back to the default. */
export function readState(search: string): WebState {
  const q = new URLSearchParams(search)
  const dateFrom = q.get('date_from')
  let filters: WebFilter[] = []
  try {
    const raw = JSON.parse(q.get('filters') ?? '[]') as unknown
    if (Array.isArray(raw)) {
      filters = raw.filter((f): f is WebFilter => !!f && typeof f === 'object' && typeof f.key === 'string' && FILTER_TYPES.has(f.type) && OPERATORS.has(f.operator)
        && Array.isArray(f.value) && f.value.every((v: unknown) => typeof v === 'string') && (f.operator === 'is_not_set' || f.value.length > 0))
    }
  } catch {
    filters = []
  }
  return {
    dateFrom: dateFrom && DATE_OPTIONS.some(([v]) => v === dateFrom) ? dateFrom : DEFAULT_STATE.dateFrom,
    compare: q.get('compare') !== 'false',
    filterTestAccounts: q.get('filter_test_accounts') === 'true',
    filters,
    goal: goalOf(q.get('goal')),
  }
}

/** The query string for a state (only what differs from the default). */
export function writeState(s: WebState): string {
  const q = new URLSearchParams()
  if (s.dateFrom !== DEFAULT_STATE.dateFrom) q.set('date_from', s.dateFrom)
  if (!s.compare) q.set('compare', 'false')
  if (s.filterTestAccounts) q.set('filter_test_accounts', 'true')
  if (s.filters.length) q.set('filters', JSON.stringify(s.filters))
  if (s.goal) q.set('goal', goalValue(s.goal))
  const text = q.toString()
  return text ? `?${text}` : ''
}

/**
 * PostHog's `togglePropertyFilter` (webAnalyticsLogic): a row's value joins an `exact` filter on the
 * same property (any of its values), a value already there is removed (or, among several, kept alone);
 * a row without a value toggles `is_not_set`. Other filters (a regex, an added one) are added beside.
 */
export function toggleFilter(s: WebState, f: WebFilter): WebState {
  const same = (g: WebFilter) => g.key === f.key && g.type === f.type && g.operator === f.operator
  const existing = s.filters.find(same)
  if (!existing || (f.operator === 'regex' && existing.value[0] !== f.value[0])) return { ...s, filters: [...s.filters, f] }
  if (f.operator !== 'exact') return { ...s, filters: s.filters.filter((g) => g !== existing) }
  const value = f.value[0]!
  const next = existing.value.includes(value) ? (existing.value.length > 1 ? [value] : []) : [...existing.value, value]
  return { ...s, filters: next.length === 0 ? s.filters.filter((g) => g !== existing) : s.filters.map((g) => (g === existing ? { ...g, value: next } : g)) }
}

/** How a filter reads on its chip: "= a or b", "is not set", "matches ^en". */
export function filterText(f: WebFilter): string {
  if (f.operator === 'is_not_set') return 'is not set'
  if (f.operator === 'regex') return `matches ${f.value[0]}`
  return `= ${f.value.join(' or ')}`
}

/** PostHog's property filters for the state (an `exact` of one value sends it alone, as PostHog does). */
export const toProperties = (filters: WebFilter[]) => filters.map((f) => ({
  key: f.key, type: f.type, operator: f.operator,
  ...(f.operator === 'is_not_set' ? {} : { value: f.operator === 'exact' && f.value.length > 1 ? f.value : f.value[0] }),
}))
const properties = (s: WebState) => toProperties(s.filters)
const base = (s: WebState) => ({
  dateRange: { date_from: s.dateFrom, date_to: null },
  properties: properties(s),
  filterTestAccounts: s.filterTestAccounts,
})

/** The overview tiles' query: with a goal, PostHog's conversion tiles (visitors, conversions, rate). */
export function overviewQuery(s: WebState): Json {
  return { kind: 'WebOverviewQuery', ...base(s), compareFilter: { compare: s.compare }, ...(s.goal ? { conversionGoal: s.goal } : {}) }
}

/** One breakdown table's query: with a goal, PostHog's conversion columns replace views and bounce rate. */
export function statsTableQuery(s: WebState, breakdownBy: string, limit = 10): Json {
  return { kind: 'WebStatsTableQuery', ...base(s), breakdownBy, includeBounceRate: true, limit, compareFilter: { compare: s.compare }, ...(s.goal ? { conversionGoal: s.goal } : {}) }
}

/** Hourly for a day or less, daily otherwise (PostHog's web trend does the same). */
export const intervalOf = (dateFrom: string) => (dateFrom === 'dStart' || dateFrom === '-24h' ? 'hour' : 'day')

/** A TrendsQuery series (PostHog's EventsNode / ActionsNode). */
export type TrendSeries = Json

/** Unique visitors and page views: the chart's series without a goal. */
export const VISITOR_SERIES: TrendSeries[] = [
  { kind: 'EventsNode', event: '$pageview', name: '$pageview', custom_name: 'Visitors', math: 'dau' },
  { kind: 'EventsNode', event: '$pageview', name: '$pageview', custom_name: 'Views', math: 'total' },
]

/**
 * The trend chart: by default unique visitors and page views per interval, through the ordinary
 * TrendsQuery (with a goal, the conversion series of `goal-trends.ts`, and a `formula` for the rate).
 * TrendsQuery has no session properties (Tally's trends filter events and persons), so session
 * filters are left out of it; the chart says so.
 */
export function trendQuery(s: WebState, series: TrendSeries[] = VISITOR_SERIES, formula?: string): Json {
  const withoutSession = { ...s, filters: s.filters.filter((f) => f.type !== 'session') }
  return {
    kind: 'TrendsQuery',
    series,
    interval: intervalOf(s.dateFrom),
    ...base(withoutSession),
    trendsFilter: { display: 'ActionsLineGraph', ...(formula ? { formula } : {}) },
    compareFilter: { compare: false },
  }
}
