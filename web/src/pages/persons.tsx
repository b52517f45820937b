import { useState } from 'react'
import { Link, Route, Switch, useLocation, useParams } from 'wouter'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Ago, Card, Empty, ErrorBox, Field, Loadable, PageHeader } from '../ui.tsx'
import type { CursorListJson, EventJson, EventListJson, PersonDetailJson, PersonJson } from '../../../src/http/wire-types.ts'


/** The newest 50 events of all of a person's distinct ids (merged persons have several). */
async function personEvents(base: string, distinctIds: string[]): Promise<EventJson[]> {
  const pages = await Promise.all(distinctIds.slice(0, 20).map((d) => api<EventListJson>(`${base}/events/?limit=50&distinct_id=${encodeURIComponent(d)}`)))
  return pages.flatMap((p) => p.results).sort((a, b) => b.timestamp.localeCompare(a.timestamp)).slice(0, 50)
}

export default function PersonsPage() {
  return (
    <Switch>
      <Route path="/:id" component={PersonDetail} />
      <Route component={PersonList} />
    </Switch>
  )
}

function PersonList() {
  const { base } = useSession()
  const [search, setSearch] = useState('')
  const [applied, setApplied] = useState('')
  const persons = useQuery({
    queryKey: ['persons', base, applied],
    queryFn: () => api<CursorListJson<PersonJson>>(`${base}/persons/?limit=100${applied ? `&search=${encodeURIComponent(applied)}` : ''}`),
  })
  return (
    <>
      <PageHeader title="People" description="Everyone your events were sent for." />
      <Card>
        <form className="row" onSubmit={(e) => { e.preventDefault(); setApplied(search) }}>
          <Field label="Search by email, name or distinct id"><input type="search" value={search} onChange={(e) => setSearch(e.target.value)} /></Field>
          <button className="btn primary">Search</button>
        </form>
      </Card>
      <Card>
        <Loadable query={persons}>
          {(page) => page.results.length === 0 ? <Empty>No people found.</Empty> : (
            <div className="table-wrap" tabIndex={0}>
              <table aria-label="People">
                <thead><tr><th>Person</th><th className="hide-narrow">Distinct ids</th><th>First seen</th></tr></thead>
                <tbody>
                  {page.results.map((p) => (
                    <tr key={p.uuid}>
                      <td><Link href={`/${p.uuid}`}>{p.name}</Link></td>
                      <td className="mono hide-narrow">{p.distinct_ids.slice(0, 3).join(', ')}{p.distinct_ids.length > 3 ? ` +${p.distinct_ids.length - 3}` : ''}</td>
                      <td><Ago iso={p.created_at} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Loadable>
      </Card>
    </>
  )
}

function PersonDetail() {
  const { base } = useSession()
  const { id } = useParams<{ id: string }>()
  const [, navigate] = useLocation()
  const queryClient = useQueryClient()
  const person = useQuery({ queryKey: ['person', base, id], queryFn: () => api<PersonDetailJson>(`${base}/persons/${encodeURIComponent(id)}/`) })
  const events = useQuery({
    queryKey: ['person-events', base, id],
    queryFn: () => personEvents(base, person.data!.distinct_ids),
    enabled: !!person.data,
  })
  const remove = useMutation({
    mutationFn: (withData: boolean | 'all') =>
      api(`${base}/persons/${encodeURIComponent(id)}/${withData === 'all' ? '?delete_events=true&delete_recordings=true' : withData ? '?delete_events=true' : ''}`, { method: 'DELETE' }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['persons'] })
      navigate('/')
    },
  })
  return (
    <Loadable query={person}>
      {(p) => (
        <>
          <PageHeader title={p.name} description={`Person ${p.uuid}`}>
            <Link href={`~/replay?person_uuid=${encodeURIComponent(p.uuid)}`} className="btn">Watch recordings</Link>
            <button type="button" className="btn danger" onClick={() => confirm('Delete this person? Their events stay.') && remove.mutate(false)}>Delete person</button>
            <button type="button" className="btn danger" onClick={() => confirm('Delete this person and all their events?') && remove.mutate(true)}>Delete with events</button>
            <button type="button" className="btn danger" onClick={() => confirm('Delete this person, their events and their recordings?') && remove.mutate('all')}>Delete with events and recordings</button>
          </PageHeader>
          {remove.error && <ErrorBox error={remove.error} />}
          <div className="grid-2">
            <PersonProperties properties={p.properties} />
            <Card title="Distinct ids">
              <ul className="mono">{p.distinct_ids.map((d) => <li key={d}>{d}</li>)}</ul>
            </Card>
          </div>
          <Card title="Events">
            <Loadable query={events}>
              {(list) => list.length === 0 ? <Empty>No events.</Empty> : (
                <table aria-label="Person events"><tbody>
                  {list.map((ev) => (
                    <tr key={ev.id}>
                      <td>{ev.event}</td>
                      <td className="mono">{ev.distinct_id}</td>
                      <td>{typeof ev.properties.$session_id === 'string' && ev.properties.$session_id
                        ? <Link href={`~/sessions/${encodeURIComponent(ev.properties.$session_id)}`} aria-label={`Session of ${ev.event} ${ev.timestamp}`}>Session</Link>
                        : null}</td>
                      <td><Ago iso={ev.timestamp} /></td>
                    </tr>
                  ))}
                </tbody></table>
              )}
            </Loadable>
          </Card>
        </>
      )}
    </Loadable>
  )
}

/** PostHog's own properties (`$initial_os`, `$geoip_*`...): its person page hides them unless asked. */
const isInternal = (key: string) => key.startsWith('$')

/**
 * A person's properties sorted by name, with a search box (name or value); nulls and PostHog's own
 * `$` properties are behind a toggle, as on PostHog's person page.
 */
function PersonProperties({ properties }: { properties: Record<string, unknown> }) {
  const [search, setSearch] = useState('')
  const [showAll, setShowAll] = useState(false)
  const all = Object.entries(properties).sort(([a], [b]) => a.localeCompare(b))
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))
  const hidden = all.filter(([k, v]) => v === null || v === undefined || isInternal(k)).length
  const needle = search.trim().toLowerCase()
  const shown = all
    .filter(([k, v]) => showAll || !(v === null || v === undefined || isInternal(k)))
    .filter(([k, v]) => !needle || k.toLowerCase().includes(needle) || text(v).toLowerCase().includes(needle))
  return (
    <Card title="Properties">
      <div className="row">
        <Field label="Search properties">
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="Name or value" />
        </Field>
        <label className="row">
          <input type="checkbox" checked={showAll} onChange={(e) => setShowAll(e.target.checked)} />
          Show empty and PostHog properties ({hidden})
        </label>
      </div>
      {shown.length === 0 ? <Empty>No properties match.</Empty> : (
        <table aria-label="Person properties"><tbody>
          {shown.map(([k, v]) => <tr key={k}><th scope="row" className="mono">{k}</th><td className="mono">{text(v)}</td></tr>)}
        </tbody></table>
      )}
    </Card>
  )
}
