import { useState } from 'react'
import { Link, useParams } from 'wouter'
import { useQuery } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { useQueryResult } from '../insights/run-query.ts'
import { humanDuration, num } from '../insights/format.ts'
import { Card, Empty, JsonView, Loadable, PageHeader } from '../ui.tsx'
import { summariseSession, type SessionEvent } from '../web-analytics/session-summary.ts'

/** Events a session page reads at most; more is said, not hidden. */
const LIMIT = 1000

/** The session's events, oldest first: an EventsQuery on `$session_id` (PostHog's sessions come from it). */
const sessionQuery = (id: string) => ({
  kind: 'EventsQuery',
  select: ['*', 'person'],
  properties: [{ key: '$session_id', value: id, operator: 'exact', type: 'event' }],
  orderBy: ['timestamp ASC'],
  limit: LIMIT,
})

interface Person { uuid: string | null; properties: Record<string, unknown> | null; distinct_id: string }

/** One session: when it started and ended, its duration, entry and exit pages, and its events in order. */
export default function SessionDetailPage() {
  const { base } = useSession()
  const { id } = useParams<{ id: string }>()
  const sessionId = decodeURIComponent(id)
  const result = useQueryResult(base, sessionQuery(sessionId))
  const [open, setOpen] = useState<string | null>(null)
  // A link to the recording only when there is one (a 404 otherwise: no button).
  const recording = useQuery({ queryKey: ['recording', base, sessionId], queryFn: () => api(`${base}/session_recordings/${encodeURIComponent(sessionId)}/`), retry: false })
  return (
    <Loadable query={result}>
      {(data) => {
        const rows = (data.results as [SessionEvent, Person][] | undefined) ?? []
        if (rows.length === 0) {
          return (<><PageHeader title="Session" description={sessionId} /><Empty>No events carry this session id.</Empty></>)
        }
        const events = rows.map(([ev]) => ev)
        const s = summariseSession(events)
        const person = rows[0]![1]
        const who = String(person.properties?.email ?? person.properties?.name ?? person.distinct_id)
        return (
          <>
            <PageHeader title="Session" description={sessionId}>
              {recording.data !== undefined && <Link href={`~/replay/${encodeURIComponent(sessionId)}`} className="btn">Watch recording</Link>}
            </PageHeader>
            <Card>
              <dl className="session-facts" aria-label="Session summary">
                <div><dt>Person</dt><dd>{person.uuid ? <Link href={`~/persons/${person.uuid}`}>{who}</Link> : who}</dd></div>
                <div><dt>Started</dt><dd><time dateTime={s.start}>{new Date(s.start).toLocaleString()}</time></dd></div>
                <div><dt>Duration</dt><dd data-testid="session-duration">{humanDuration(s.durationSeconds)}</dd></div>
                <div><dt>Entry page</dt><dd className="mono" data-testid="session-entry">{s.entryUrl ?? '—'}</dd></div>
                <div><dt>Exit page</dt><dd className="mono" data-testid="session-exit">{s.exitUrl ?? '—'}</dd></div>
                <div><dt>Page views</dt><dd>{num(s.pageviews)}</dd></div>
                <div><dt>Autocaptured</dt><dd>{num(s.autocaptures)}</dd></div>
                <div><dt>Events</dt><dd>{num(events.length)}{data.hasMore ? ` (the first ${LIMIT})` : ''}</dd></div>
              </dl>
            </Card>
            <Card title="Events">
              <ol className="session-events" aria-label="Session events">
                {events.map((ev) => (
                  <li key={ev.uuid}>
                    <span className="muted mono">+{humanDuration((Date.parse(ev.timestamp) - Date.parse(s.start)) / 1000)}</span>
                    <button type="button" className="link" aria-expanded={open === ev.uuid} onClick={() => setOpen(open === ev.uuid ? null : ev.uuid)}>{ev.event}</button>
                    <span className="mono">{String(ev.properties?.$pathname ?? ev.properties?.$current_url ?? '')}</span>
                    {open === ev.uuid && <JsonView value={ev.properties} />}
                  </li>
                ))}
              </ol>
            </Card>
          </>
        )
      }}
    </Loadable>
  )
}
