import { Link } from 'wouter'
import { useSession } from '../session.tsx'
import { useQueryResult } from '../insights/run-query.ts'
import { humanDuration, num } from '../insights/format.ts'
import { Ago, Card, Empty, Loadable } from '../ui.tsx'
import { toProperties, type WebState } from './web-filters.ts'

/**
 * The latest sessions of the range (an EventsQuery grouped by `$session_id`), each a link to its
 * session page. Session-level filters do not apply to single events, so only event and person
 * filters narrow this list.
 */
function sessionsQuery(s: WebState) {
  return {
    kind: 'EventsQuery',
    select: ['properties.$session_id', 'min(timestamp)', 'max(timestamp)', 'count()'],
    after: s.dateFrom,
    properties: [
      { key: '$session_id', operator: 'is_set', type: 'event' },
      ...toProperties(s.filters.filter((f) => f.type !== 'session')),
    ],
    orderBy: ['max(timestamp) DESC'],
    limit: 10,
  }
}

export function RecentSessions({ state }: { state: WebState }) {
  const { base } = useSession()
  const result = useQueryResult(base, sessionsQuery(state))
  return (
    <Card title="Latest sessions">
      <Loadable query={result}>
        {(data) => {
          const rows = (data.results as [string, string, string, number][] | undefined) ?? []
          if (rows.length === 0) return <Empty>No sessions in this range.</Empty>
          return (
            <div className="table-wrap" tabIndex={0}>
              <table aria-label="Latest sessions">
                <thead><tr><th>Session</th><th className="num">Events</th><th className="num">Duration</th><th>Last seen</th></tr></thead>
                <tbody>
                  {rows.map(([id, start, end, count]) => (
                    <tr key={id}>
                      <td className="mono"><Link href={`~/sessions/${encodeURIComponent(id)}`}>{id}</Link></td>
                      <td className="num">{num(count)}</td>
                      <td className="num">{humanDuration((Date.parse(end) - Date.parse(start)) / 1000)}</td>
                      <td><Ago iso={end} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }}
      </Loadable>
    </Card>
  )
}
