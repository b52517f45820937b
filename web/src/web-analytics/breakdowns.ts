import type { WebFilter } from './web-filters.ts'

/**
 * The breakdown tables of the Web analytics page, in PostHog's tab groups. Each tab names its
 * `WebStatsBreakdown` and the property a click on one of its rows filters the page by (the ones
 * PostHog's webAnalyticsLogic toggles: event properties for pages and devices, session properties
 * for where a session started and how it ended).
 */
export interface BreakdownTab {
  id: string
  label: string
  breakdownBy: string
  /** The column heading of the breakdown value. */
  column: string
  filter: { key: string; type: WebFilter['type'] }
  /**
   * Region and city values come as tuples (country code, region code, name / country code, city):
   * the element that the filter property holds.
   */
  tupleIndex?: number
}

export interface BreakdownGroup { title: string; tabs: BreakdownTab[] }

export const BREAKDOWN_GROUPS: BreakdownGroup[] = [
  {
    title: 'Paths',
    tabs: [
      { id: 'pages', label: 'Pages', breakdownBy: 'Page', column: 'Path', filter: { key: '$pathname', type: 'event' } },
      { id: 'entry', label: 'Entry paths', breakdownBy: 'InitialPage', column: 'Entry path', filter: { key: '$entry_pathname', type: 'session' } },
      { id: 'exit', label: 'Exit paths', breakdownBy: 'ExitPage', column: 'Exit path', filter: { key: '$end_pathname', type: 'session' } },
    ],
  },
  {
    title: 'Sources',
    tabs: [
      { id: 'channel', label: 'Channels', breakdownBy: 'InitialChannelType', column: 'Channel', filter: { key: '$channel_type', type: 'session' } },
      { id: 'referrer', label: 'Referrers', breakdownBy: 'InitialReferringDomain', column: 'Referring domain', filter: { key: '$entry_referring_domain', type: 'session' } },
      { id: 'utm_source', label: 'UTM source', breakdownBy: 'InitialUTMSource', column: 'UTM source', filter: { key: '$entry_utm_source', type: 'session' } },
      { id: 'utm_medium', label: 'UTM medium', breakdownBy: 'InitialUTMMedium', column: 'UTM medium', filter: { key: '$entry_utm_medium', type: 'session' } },
      { id: 'utm_campaign', label: 'UTM campaign', breakdownBy: 'InitialUTMCampaign', column: 'UTM campaign', filter: { key: '$entry_utm_campaign', type: 'session' } },
    ],
  },
  {
    title: 'Devices',
    tabs: [
      { id: 'device', label: 'Device type', breakdownBy: 'DeviceType', column: 'Device type', filter: { key: '$device_type', type: 'event' } },
      { id: 'browser', label: 'Browsers', breakdownBy: 'Browser', column: 'Browser', filter: { key: '$browser', type: 'event' } },
      { id: 'os', label: 'OS', breakdownBy: 'OS', column: 'OS', filter: { key: '$os', type: 'event' } },
    ],
  },
  {
    title: 'Geography',
    tabs: [
      { id: 'country', label: 'Countries', breakdownBy: 'Country', column: 'Country', filter: { key: '$geoip_country_code', type: 'event' } },
      { id: 'region', label: 'Regions', breakdownBy: 'Region', column: 'Region', filter: { key: '$geoip_subdivision_1_code', type: 'event' }, tupleIndex: 1 },
      { id: 'city', label: 'Cities', breakdownBy: 'City', column: 'City', filter: { key: '$geoip_city_name', type: 'event' }, tupleIndex: 1 },
    ],
  },
  {
    title: 'Language and time zone',
    tabs: [
      { id: 'language', label: 'Languages', breakdownBy: 'Language', column: 'Language', filter: { key: '$browser_language', type: 'event' } },
      { id: 'timezone', label: 'Time zones', breakdownBy: 'Timezone', column: 'Time zone', filter: { key: '$timezone', type: 'event' } },
    ],
  },
]

/** Every tab by its id. */
export const TABS = new Map(BREAKDOWN_GROUPS.flatMap((g) => g.tabs.map((t) => [t.id, t] as const)))

/** What a breakdown value reads as in the table: tuples joined, none as PostHog writes it. */
export function breakdownLabel(value: unknown): string {
  if (value === null || value === undefined || value === '') return '(none)'
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== '').map(String).join(' · ') || '(none)'
  return String(value)
}

/**
 * The filter a click on a row with this breakdown value toggles: its value (`exact`), or `is_not_set`
 * for the row of events without one. Languages are grouped by their first part (`en-US` shows the
 * `en` row), so that row filters on the language whatever its region.
 */
export function rowFilter(tab: BreakdownTab, value: unknown): WebFilter {
  const v = Array.isArray(value) ? value[tab.tupleIndex ?? 0] : value
  const { key, type } = tab.filter
  if (v === null || v === undefined || v === '') return { key, type, operator: 'is_not_set', value: [] }
  if (tab.id === 'language') return { key, type, operator: 'regex', value: [`^${escapeRegex(String(v).split('-')[0]!)}(-|$)`] }
  return { key, type, operator: 'exact', value: [String(v)] }
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
