import { bin, col, lit, notNull, type Expr } from '../query/query-plan.ts'
import type { WebStatsBreakdown } from './web-query.ts'

/**
 * One record per `WebStatsBreakdown` (PostHog's stats_table.py `_counts_breakdown_value` and
 * `where_breakdown`): what each part of the value reads, from the event (`event`: an expression on
 * the events) or from its session (`session`: an expression on `sessionsPlan`'s columns), and which
 * rows are kept. A breakdown of several parts is a tuple in PostHog: a list in the results.
 */
export interface BreakdownDef {
  parts: ReadonlyArray<{ from: 'event' | 'session'; expr: Expr }>
  /** PostHog's `where_breakdown`: `not_null` (the value), `any` (UTMs: nulls shown), `second_not_null` (region, city), `sizes` (viewport: both set and not 0), `not_empty` (channel). */
  keep: 'not_null' | 'any' | 'second_not_null' | 'sizes' | 'not_empty'
  /** Reads `channel_type` of the session (the channel lookup runs only then). */
  channel?: boolean
  /** Language: grouped by the language before `-`, shown with its most common region (PostHog's `aggregation_value`). */
  language?: boolean
}

const event = (key: string): { from: 'event'; expr: Expr } => ({ from: 'event', expr: { op: 'property', source: 'event', key } })
const eventNumber = (key: string): { from: 'event'; expr: Expr } => ({ from: 'event', expr: { op: 'to_number', arg: { op: 'property', source: 'event', key } } })
const session = (column: string): { from: 'session'; expr: Expr } => ({ from: 'session', expr: col(column) })
const NULL_DISPLAY = '(none)'
const orNone = (e: Expr): Expr => ({ op: 'coalesce', args: [e, lit(NULL_DISPLAY)] })

/** `InitialUTMSourceMediumCampaign`: source (or `referrer:` and the referring domain) / medium / campaign, `(none)` for absent parts. */
const sourceMediumCampaign: Expr = {
  op: 'concat',
  separator: ' / ',
  args: [
    {
      op: 'case',
      when: [
        [notNull(col('entry_utm_source')), col('entry_utm_source')],
        [notNull(col('entry_referring_domain')), { op: 'concat', separator: '', args: [lit('referrer:'), col('entry_referring_domain')] }],
      ],
      else: lit(NULL_DISPLAY),
    },
    orNone(col('entry_utm_medium')),
    orNone(col('entry_utm_campaign')),
  ],
}

/** Breakdowns Tally computes; the others (PreviousPage, FrustrationMetrics) are a 400 naming `breakdownBy`. */
export const WEB_BREAKDOWNS: ReadonlyMap<WebStatsBreakdown, BreakdownDef> = new Map<WebStatsBreakdown, BreakdownDef>([
  ['Page', { parts: [event('$pathname')], keep: 'not_null' }],
  ['InitialPage', { parts: [session('entry_pathname')], keep: 'not_null' }],
  ['ExitPage', { parts: [session('end_pathname')], keep: 'not_null' }],
  ['ExitClick', { parts: [session('last_external_click_url')], keep: 'not_null' }],
  ['ScreenName', { parts: [event('$screen_name')], keep: 'not_null' }],
  ['InitialChannelType', { parts: [session('channel_type')], keep: 'not_empty', channel: true }],
  ['InitialReferringDomain', { parts: [session('entry_referring_domain')], keep: 'not_null' }],
  ['InitialUTMSource', { parts: [session('entry_utm_source')], keep: 'any' }],
  ['InitialUTMCampaign', { parts: [session('entry_utm_campaign')], keep: 'any' }],
  ['InitialUTMMedium', { parts: [session('entry_utm_medium')], keep: 'any' }],
  ['InitialUTMTerm', { parts: [session('entry_utm_term')], keep: 'any' }],
  ['InitialUTMContent', { parts: [session('entry_utm_content')], keep: 'any' }],
  ['InitialUTMSourceMediumCampaign', { parts: [{ from: 'session', expr: sourceMediumCampaign }], keep: 'not_null' }],
  ['Browser', { parts: [event('$browser')], keep: 'not_null' }],
  ['OS', { parts: [event('$os')], keep: 'not_null' }],
  ['Viewport', { parts: [eventNumber('$viewport_width'), eventNumber('$viewport_height')], keep: 'sizes' }],
  ['DeviceType', { parts: [event('$device_type')], keep: 'not_null' }],
  ['Country', { parts: [event('$geoip_country_code')], keep: 'not_null' }],
  ['Region', { parts: [event('$geoip_country_code'), event('$geoip_subdivision_1_code'), event('$geoip_subdivision_1_name')], keep: 'second_not_null' }],
  ['City', { parts: [event('$geoip_country_code'), event('$geoip_city_name')], keep: 'second_not_null' }],
  // Minutes behind UTC (getTimezoneOffset) as hours ahead of it: -600 is UTC+10.
  ['Timezone', { parts: [{ from: 'event', expr: bin('/', bin('-', lit(0), { op: 'to_number', arg: { op: 'property', source: 'event', key: '$timezone_offset' } }), lit(60)) }], keep: 'not_null' }],
  ['Language', { parts: [event('$browser_language')], keep: 'not_null', language: true }],
])

/** The row filter of a breakdown over its part columns (`bv0`, `bv1`...). */
export function keepCondition(def: BreakdownDef): Expr | undefined {
  const part = (i: number) => col(`bv${i}`)
  switch (def.keep) {
    case 'any':
      return undefined
    case 'not_null':
      return notNull(part(0))
    case 'second_not_null':
      return notNull(part(1))
    case 'sizes':
      return { op: 'and', args: [notNull(part(0)), notNull(part(1)), bin('!=', part(0), lit(0)), bin('!=', part(1), lit(0))] }
    case 'not_empty':
      return { op: 'and', args: [notNull(part(0)), bin('!=', part(0), lit(''))] }
  }
}

/** Language `en-US` → grouped as `en`; its region part (`US`) counted for the most common one. */
export const languagePrefix = (e: Expr): Expr => ({ op: 'coalesce', args: [{ op: 'regex_extract', arg: e, pattern: '^([^-]*)' }, lit('')] })
export const languageRegion = (e: Expr): Expr => ({ op: 'coalesce', args: [{ op: 'regex_extract', arg: e, pattern: '^[^-]*-(.*)' }, lit('')] })
