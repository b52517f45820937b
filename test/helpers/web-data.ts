// A seeded web-analytics data set (posthog-js-like events with $session_id) for the web query tests,
// in Europe/Amsterdam (UTC+2 in June): sessions across local midnight, at the periods' edges, late
// events, bounces, and a channel per session from a table of PostHog's channel rules.
import { seededRandom, type TestEvent } from './query-data.ts'

export const ZONE = 'Europe/Amsterdam'
/** 2024-06-03..2024-06-05 local, and the three days before (compare). */
export const CURRENT = { from: Date.parse('2024-06-02T22:00:00Z'), to: Date.parse('2024-06-05T22:00:00Z') }
export const PREVIOUS = { from: Date.parse('2024-05-30T22:00:00Z'), to: Date.parse('2024-06-02T22:00:00Z') }
export const DATE_RANGE = { date_from: '2024-06-03', date_to: '2024-06-05' }

/**
 * Channel cases: a session's first event properties and the channel PostHog gives it
 * (posthog/hogql/database/schema/test/test_channel_type.py and channel_type.py's rules).
 */
export const CHANNEL_CASES: ReadonlyArray<[Record<string, unknown>, string]> = [
  [{ $referring_domain: '$direct' }, 'Direct'],
  [{ $referring_domain: '$direct', utm_campaign: 'cross-network' }, 'Cross Network'],
  [{ $referring_domain: 'www.ebay.co.uk', utm_medium: 'ppc' }, 'Paid Shopping'],
  [{ $referring_domain: '$direct', utm_source: 'ebay', utm_medium: 'ppc' }, 'Paid Shopping'],
  [{ $referring_domain: '$direct', utm_campaign: 'shopping', utm_medium: 'ppc' }, 'Paid Shopping'],
  [{ $referring_domain: 'www.google.co.uk', gclid: 'some-gclid' }, 'Paid Search'],
  [{ $referring_domain: '$direct', utm_source: 'yahoo', utm_medium: 'ppc' }, 'Paid Search'],
  [{ $referring_domain: 'youtube.com', utm_medium: 'cpc' }, 'Paid Video'],
  [{ $referring_domain: '$direct', utm_source: 'youtube.com', utm_medium: 'cpc' }, 'Paid Video'],
  [{ $referring_domain: 'youtube.com' }, 'Organic Video'],
  [{}, 'Unknown'],
  [{ $referring_domain: 'some-unknown-domain.example.com' }, 'Referral'],
  [{ $referring_domain: 'uk.search.yahoo.com', utm_source: 'bing', utm_medium: 'cpc' }, 'Paid Search'],
  [{ $referring_domain: '$direct', gad_source: '1', gclid: 'CjwKCAiA98' }, 'Paid Search'],
  [{ $referring_domain: '$direct', gad_source: '1', utm_medium: 'pmax', utm_source: 'google' }, 'Paid Search'],
  [{ $referring_domain: '2bb5cd7f.safeframe.googlesyndication.com', gclid: 'EAIaIQob' }, 'Paid Unknown'],
  [{ $referring_domain: 'www.google.com' }, 'Organic Search'],
  [{ $referring_domain: 'www.bing.com' }, 'Organic Search'],
  [{ $referring_domain: 'l.facebook.com', utm_source: 'facebook', utm_medium: 'cpc', fbclid: 'IwAR30' }, 'Paid Social'],
  [{ $referring_domain: 'l.facebook.com', utm_source: 'facebook', utm_medium: 'paid', fbclid: 'IwAR3K' }, 'Paid Social'],
  [{ $referring_domain: 'l.facebook.com', fbclid: 'IwAR1Z' }, 'Organic Social'],
  [{ $referring_domain: '$direct', fbclid: 'IwAR1Z' }, 'Organic Social'],
  [{ $referring_domain: '$direct', utm_medium: 'email' }, 'Email'],
  [{ $referring_domain: '$direct', utm_medium: 'web-push' }, 'Push'],
  [{ $referring_domain: '$direct', utm_source: 'Google', utm_medium: 'CPC' }, 'Paid Search'],
  [{ $referring_domain: '$direct', utm_medium: 'affiliate' }, 'Affiliate'],
  [{ $referring_domain: 'news.ycombinator.com' }, 'Organic Social'],
  [{ $referring_domain: 'www.reddit.com' }, 'Organic Social'],
  [{ $referring_domain: '$direct', utm_campaign: 'summer video launch', utm_medium: 'newsletter' }, 'Organic Video'],
  [{ $referring_domain: 'mail.google.com' }, 'Email'],
  [{ $referring_domain: '$direct', utm_source: 'direct' }, 'Direct'],
]

export const PAGES = ['/', '/pricing', '/docs', '/blog/a', '/blog/b']
const BROWSERS = ['Chrome', 'Firefox', 'Safari']
const DEVICES = ['Desktop', 'Mobile', 'Tablet']
const GEO = [
  { $geoip_country_code: 'NL', $geoip_subdivision_1_code: 'NH', $geoip_subdivision_1_name: 'North Holland', $geoip_city_name: 'Amsterdam' },
  { $geoip_country_code: 'US', $geoip_subdivision_1_code: 'CA', $geoip_subdivision_1_name: 'California', $geoip_city_name: 'San Francisco' },
  { $geoip_country_code: 'DE', $geoip_subdivision_1_code: 'BE', $geoip_subdivision_1_name: 'Berlin', $geoip_city_name: 'Berlin' },
  { $geoip_country_code: 'US' },
]
const LANGUAGES = ['en-US', 'en-GB', 'en-US', 'nl-NL', 'de-DE']
const OFFSETS = [-120, 0, 300, -330]

export interface WebDataSet {
  events: TestEvent[]
  /** Events captured after the others (a session's first page view arriving late). */
  late: TestEvent[]
  /** The channel case index of each session. */
  channelOf: Map<string, number>
}

const iso = (ms: number) => new Date(ms).toISOString()

/** The data set: seeded sessions over 2024-05-30..2024-06-06 (UTC) plus the edge cases named below. */
export function webDataSet(): WebDataSet {
  const rand = seededRandom(7)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
  const events: TestEvent[] = []
  const late: TestEvent[] = []
  const channelOf = new Map<string, number>()
  let n = 0
  const session = (opts: { person: string; start: number; gaps: number[]; channel?: number; autocapture?: boolean; lateFirst?: boolean; screenOnly?: boolean }) => {
    const sid = `s-${String(n++).padStart(3, '0')}`
    const channel = opts.channel ?? Math.floor(rand() * CHANNEL_CASES.length)
    channelOf.set(sid, channel)
    const common = { $session_id: sid, $browser: pick(BROWSERS), $device_type: pick(DEVICES), ...pick(GEO), $browser_language: pick(LANGUAGES), $timezone_offset: pick(OFFSETS) }
    let t = opts.start
    for (const [i, gap] of [0, ...opts.gaps].entries()) {
      t += gap
      const path = i === 0 && opts.lateFirst ? '/landing' : pick(PAGES)
      const attribution = i === 0 ? CHANNEL_CASES[channel]![0] : { $referring_domain: 'shop.test', utm_source: 'internal' }
      const e: TestEvent = {
        event: opts.screenOnly ? '$screen' : '$pageview',
        distinct_id: opts.person,
        timestamp: iso(t),
        properties: { ...common, ...attribution, $current_url: `https://shop.test${path}?ref=${i}`, $pathname: path },
      }
      ;(i === 0 && opts.lateFirst ? late : events).push(e)
      if (opts.autocapture && i === 0) events.push({ event: '$autocapture', distinct_id: opts.person, timestamp: iso(t + 500), properties: { ...common, $current_url: `https://shop.test${path}` } })
    }
    return sid
  }
  // Seeded sessions from before the previous period to after the current one.
  const span = Date.parse('2024-06-06T06:00:00Z') - Date.parse('2024-05-30T12:00:00Z')
  for (let i = 0; i < 90; i++) {
    const start = Date.parse('2024-05-30T12:00:00Z') + Math.floor(rand() * span / 1000) * 1000
    const views = 1 + Math.floor(rand() * 4)
    const gaps = Array.from({ length: views - 1 }, () => 1000 + Math.floor(rand() * 300) * 1000)
    session({ person: `p${Math.floor(rand() * 30)}`, start, gaps, autocapture: rand() < 0.2 })
  }
  // Across local midnight in the current period: 23:50 on 3 June to 00:15 on 4 June (Amsterdam).
  session({ person: 'midnight', start: Date.parse('2024-06-03T21:50:00Z'), gaps: [20 * 60_000, 5 * 60_000], channel: 0 })
  // Starts on the previous period's last local day and goes on into the current one.
  session({ person: 'edge-before', start: Date.parse('2024-06-02T21:55:00Z'), gaps: [10 * 60_000], channel: 16 })
  // Starts on the current period's last local day, its second view falls after the range.
  session({ person: 'edge-after', start: Date.parse('2024-06-05T21:58:00Z'), gaps: [5 * 60_000], channel: 16 })
  // A session whose first page view arrives after the rest.
  session({ person: 'late', start: Date.parse('2024-06-04T10:00:00Z'), gaps: [40_000, 30_000], lateFirst: true, channel: 9 })
  // Bounces: one quick view (bounce); one view and a click (not); one view with a custom event 15 s later (not).
  session({ person: 'bouncer', start: Date.parse('2024-06-04T11:00:00Z'), gaps: [], channel: 0 })
  session({ person: 'clicker', start: Date.parse('2024-06-04T12:00:00Z'), gaps: [], autocapture: true, channel: 0 })
  const stayer = session({ person: 'stayer', start: Date.parse('2024-06-04T13:00:00Z'), gaps: [], channel: 0 })
  events.push({ event: 'read', distinct_id: 'stayer', timestamp: '2024-06-04T13:00:15.000Z', properties: { $session_id: stayer } })
  // A mobile session of screens only: counted, no bounce value.
  session({ person: 'app', start: Date.parse('2024-06-04T14:00:00Z'), gaps: [3000], screenOnly: true, channel: 0 })
  // One session per channel case, each its own visitor, in the current period.
  CHANNEL_CASES.forEach((_, i) => session({ person: `chan-${i}`, start: Date.parse('2024-06-03T08:00:00Z') + i * 600_000, gaps: [2000], channel: i }))
  // Events without a session: not part of web analytics.
  events.push({ event: '$pageview', distinct_id: 'nosession', timestamp: '2024-06-04T09:00:00Z', properties: { $current_url: 'https://shop.test/', $pathname: '/' } })
  return { events, late, channelOf }
}
