/** An event as EventsQuery's `*` column gives it. */
export interface SessionEvent { uuid: string; event: string; timestamp: string; distinct_id: string; properties: Record<string, unknown> | null }

export interface SessionSummary {
  start: string
  end: string
  durationSeconds: number
  /** The first and last `$current_url` of the session (PostHog's `$entry_current_url` / `$end_current_url`). */
  entryUrl: string | null
  exitUrl: string | null
  pageviews: number
  autocaptures: number
}

const url = (e: SessionEvent) => {
  const v = e.properties?.$current_url
  return typeof v === 'string' && v !== '' ? v : null
}

/**
 * A session's facts from its events, oldest first, as PostHog's sessions table defines them: start
 * and end are the first and last event, the entry and exit URLs the first and last `$current_url`.
 */
export function summariseSession(events: SessionEvent[]): SessionSummary {
  const times = events.map((e) => Date.parse(e.timestamp))
  const start = Math.min(...times)
  const end = Math.max(...times)
  const withUrl = events.filter((e) => url(e) !== null)
  return {
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    durationSeconds: (end - start) / 1000,
    entryUrl: withUrl.length ? url(withUrl[0]!) : null,
    exitUrl: withUrl.length ? url(withUrl[withUrl.length - 1]!) : null,
    pageviews: events.filter((e) => e.event === '$pageview').length,
    autocaptures: events.filter((e) => e.event === '$autocapture').length,
  }
}
