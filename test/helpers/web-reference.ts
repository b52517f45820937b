// Web analytics answers computed in plain JavaScript from the test's own events, following PostHog's
// definitions (sessions_v2.py, web_overview.py, stats_table.py) as the tests read them; never Tally's SQL.
import type { TestEvent } from './query-data.ts'

export interface RefSession {
  id: string
  start: number
  end: number
  duration: number
  pageviews: number
  autocaptures: number
  isBounce: number | null
  entryUrl: string | null
  entryPathname: string | null
  endPathname: string | null
  props: Record<string, unknown>
}

const text = (v: unknown): string | null => (v === undefined || v === null || v === '' ? null : String(v))
const pathOf = (url: string | null): string | null => {
  if (!url) return null
  const m = /^[a-z]+:\/\/[^/?#]*([^?#]*)/i.exec(url)
  return m && m[1] ? m[1] : null
}

/** Every session of the events (any type), by `$session_id`. */
export function referenceSessions(events: readonly TestEvent[]): Map<string, RefSession> {
  const bySession = new Map<string, TestEvent[]>()
  for (const e of events) {
    const sid = e.properties?.$session_id
    if (typeof sid !== 'string' || sid === '') continue
    bySession.set(sid, [...(bySession.get(sid) ?? []), e])
  }
  const out = new Map<string, RefSession>()
  for (const [id, list] of bySession) {
    const sorted = [...list].sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp))
    const first = sorted[0]!
    const last = sorted[sorted.length - 1]!
    const start = Date.parse(first.timestamp)
    const end = Date.parse(last.timestamp)
    const duration = Math.floor(end / 1000) - Math.floor(start / 1000)
    const pageviews = sorted.filter((e) => e.event === '$pageview').length
    const autocaptures = sorted.filter((e) => e.event === '$autocapture').length
    const isBounce = pageviews === 0 ? null : pageviews > 1 || autocaptures > 0 || duration >= 10 ? 0 : 1
    const entryUrl = text(first.properties?.$current_url)
    out.set(id, { id, start, end, duration, pageviews, autocaptures, isBounce, entryUrl, entryPathname: pathOf(entryUrl), endPathname: pathOf(text(last.properties?.$current_url)), props: first.properties ?? {} })
  }
  return out
}

export interface Span {
  from: number
  to: number
}
const inSpan = (t: number, s: Span | null) => s !== null && t >= s.from && t < s.to

/** The page views and screens of the periods with a session, kept when their session started in one of them. */
function viewsBySession(events: readonly TestEvent[], sessions: Map<string, RefSession>, current: Span, previous: Span | null, keep: (e: TestEvent) => boolean) {
  const out = new Map<string, TestEvent[]>()
  for (const e of events) {
    const sid = e.properties?.$session_id as string | undefined
    if (!sid || (e.event !== '$pageview' && e.event !== '$screen') || !keep(e)) continue
    const t = Date.parse(e.timestamp)
    if (!inSpan(t, current) && !inSpan(t, previous)) continue
    const s = sessions.get(sid)!
    if (!inSpan(s.start, current) && !inSpan(s.start, previous)) continue
    out.set(sid, [...(out.get(sid) ?? []), e])
  }
  return out
}

const avg = (xs: Array<number | null>): number | null => {
  const present = xs.filter((x): x is number => x !== null)
  return present.length === 0 ? null : present.reduce((a, b) => a + b, 0) / present.length
}

/** PostHog's overview numbers for one period. */
export function referenceOverview(events: readonly TestEvent[], current: Span, previous: Span | null, keep: (e: TestEvent) => boolean = () => true) {
  const sessions = referenceSessions(events)
  const views = viewsBySession(events, sessions, current, previous, keep)
  const period = (span: Span) => {
    const ids = [...views.keys()].filter((id) => inSpan(sessions.get(id)!.start, span))
    return {
      visitors: new Set(ids.map((id) => views.get(id)![0]!.distinct_id)).size,
      views: ids.reduce((n, id) => n + views.get(id)!.length, 0),
      sessions: ids.length,
      duration: avg(ids.map((id) => sessions.get(id)!.duration)),
      bounceRate: avg(ids.map((id) => sessions.get(id)!.isBounce)),
    }
  }
  return { current: period(current), previous: previous ? period(previous) : null }
}

/** Per breakdown value of one period: visitors, views and the bounce rate of the (session, value) pairs. */
export function referenceTable(
  events: readonly TestEvent[],
  span: Span,
  value: (e: TestEvent, s: RefSession) => unknown,
  opts: { keepNull?: boolean; otherPeriod?: Span } = {},
): Map<string, { visitors: number; views: number; bounceRate: number | null }> {
  const sessions = referenceSessions(events)
  // With compare, events of either period count (a session may start in one and go on in the other).
  const views = new Map([...viewsBySession(events, sessions, span, opts.otherPeriod ?? null, () => true)].filter(([id]) => inSpan(sessions.get(id)!.start, span)))
  const groups = new Map<string, { persons: Set<string>; views: number; bounces: Array<number | null> }>()
  for (const [sid, list] of views) {
    const s = sessions.get(sid)!
    const byValue = new Map<string, TestEvent[]>()
    for (const e of list) {
      const v = value(e, s)
      if (v === undefined || (v === null && !opts.keepNull)) continue
      const key = JSON.stringify(v)
      byValue.set(key, [...(byValue.get(key) ?? []), e])
    }
    for (const [key, es] of byValue) {
      const g = groups.get(key) ?? { persons: new Set<string>(), views: 0, bounces: [] }
      g.persons.add(es[0]!.distinct_id)
      g.views += es.length
      g.bounces.push(s.isBounce)
      groups.set(key, g)
    }
  }
  return new Map([...groups].map(([k, g]) => [k, { visitors: g.persons.size, views: g.views, bounceRate: avg(g.bounces) }]))
}
