/**
 * The Web analytics page's state (date range, compare, test accounts, property filters), kept in the
 * address bar so a filtered view can be shared and survives a reload, and the PostHog queries it
 * stands for (schema-general.ts: WebOverviewQuery, WebStatsTableQuery, TrendsQuery).
 */
type Json = Record<string, unknown>

/** One filter on the page: PostHog's EventPropertyFilter / SessionPropertyFilter, always `exact`. */
export interface WebFilter { key: string; value: string; type: 'event' | 'session' | 'person' }

export interface WebState {
  dateFrom: string
  compare: boolean
  filterTestAccounts: boolean
  filters: WebFilter[]
}

/** PostHog's date options of the web analytics page (its default is the last 7 days). */
export const DATE_OPTIONS: [string, string][] = [
  ['dStart', 'Today'], ['-24h', 'Last 24 hours'], ['-7d', 'Last 7 days'], ['-14d', 'Last 14 days'],
  ['-30d', 'Last 30 days'], ['-90d', 'Last 90 days'], ['-180d', 'Last 180 days'],
]

export const DEFAULT_STATE: WebState = { dateFrom: '-7d', compare: true, filterTestAccounts: false, filters: [] }

const FILTER_TYPES = new Set(['event', 'session', 'person'])

/** The state from the address bar's query string; anything unreadable falls back to the default. */
export function readState(search: string): WebState {
  const q = new URLSearchParams(search)
  const dateFrom = q.get('date_from')
  let filters: WebFilter[] = []
  try {
    const raw = JSON.parse(q.get('filters') ?? '[]') as unknown
    if (Array.isArray(raw)) {
      filters = raw.filter((f): f is WebFilter => !!f && typeof f === 'object' && typeof f.key === 'string' && typeof f.value === 'string' && FILTER_TYPES.has(f.type))
    }
  } catch {
    filters = []
  }
  return {
    dateFrom: dateFrom && DATE_OPTIONS.some(([v]) => v === dateFrom) ? dateFrom : DEFAULT_STATE.dateFrom,
    compare: q.get('compare') !== 'false',
    filterTestAccounts: q.get('filter_test_accounts') === 'true',
    filters,
  }
}

/** The query string for a state (only what differs from the default). */
export function writeState(s: WebState): string {
  const q = new URLSearchParams()
  if (s.dateFrom !== DEFAULT_STATE.dateFrom) q.set('date_from', s.dateFrom)
  if (!s.compare) q.set('compare', 'false')
  if (s.filterTestAccounts) q.set('filter_test_accounts', 'true')
  if (s.filters.length) q.set('filters', JSON.stringify(s.filters))
  const text = q.toString()
  return text ? `?${text}` : ''
}

/** Adds the filter, or removes it when the same key and value is already there (PostHog's toggle). */
export function toggleFilter(s: WebState, f: WebFilter): WebState {
  const same = (g: WebFilter) => g.key === f.key && g.type === f.type
  const existing = s.filters.find(same)
  if (existing && existing.value === f.value) return { ...s, filters: s.filters.filter((g) => !same(g)) }
  return { ...s, filters: [...s.filters.filter((g) => !same(g)), f] }
}

const properties = (s: WebState) => s.filters.map((f) => ({ key: f.key, value: f.value, operator: 'exact', type: f.type }))
const base = (s: WebState) => ({
  dateRange: { date_from: s.dateFrom, date_to: null },
  properties: properties(s),
  filterTestAccounts: s.filterTestAccounts,
})

/** The overview tiles' query. */
export function overviewQuery(s: WebState): Json {
  return { kind: 'WebOverviewQuery', ...base(s), compareFilter: { compare: s.compare } }
}

/** One breakdown table's query. */
export function statsTableQuery(s: WebState, breakdownBy: string, limit = 10): Json {
  return { kind: 'WebStatsTableQuery', ...base(s), breakdownBy, includeBounceRate: true, limit, compareFilter: { compare: s.compare } }
}

/** Hourly for a day or less, daily otherwise (PostHog's web trend does the same). */
export const intervalOf = (dateFrom: string) => (dateFrom === 'dStart' || dateFrom === '-24h' ? 'hour' : 'day')

/** The trend chart: unique visitors and page views per interval, through the ordinary TrendsQuery. */
export function trendQuery(s: WebState): Json {
  return {
    kind: 'TrendsQuery',
    series: [
      { kind: 'EventsNode', event: '$pageview', name: '$pageview', custom_name: 'Visitors', math: 'dau' },
      { kind: 'EventsNode', event: '$pageview', name: '$pageview', custom_name: 'Views', math: 'total' },
    ],
    interval: intervalOf(s.dateFrom),
    ...base(s),
    trendsFilter: { display: 'ActionsLineGraph' },
    compareFilter: { compare: false },
  }
}
