import { useEffect, useRef, useState } from 'react'
import { Link } from 'wouter'
import { useQuery } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Ago, Card, Empty, Field, JsonView, Loadable, PageHeader } from '../ui.tsx'
import type { EventJson, EventListJson } from '../../../src/http/wire-types.ts'
import { parseElementsChain, type ElementJson } from '../../../src/domain/events/parse-elements-chain.ts'

interface Filters {
  event: string
  distinctId: string
  propKey: string
  propValue: string
}

/** Events per page: the live page, and each "Load older events". */
const PAGE_SIZE = 50

const NONE: Filters = { event: '', distinctId: '', propKey: '', propValue: '' }

function eventsUrl(base: string, f: Filters): string {
  const q = new URLSearchParams({ limit: String(PAGE_SIZE) })
  if (f.event) q.set('event', f.event)
  if (f.distinctId) q.set('distinct_id', f.distinctId)
  if (f.propKey) q.set('properties', JSON.stringify([{ key: f.propKey, value: f.propValue, operator: f.propValue ? 'exact' : 'is_set', type: 'event' }]))
  return `${base}/events/?${q}`
}

/** One element of an autocapture event as a line: `tag.classes#id "text"` and its other attributes. */
function ElementLine({ el }: { el: ElementJson }) {
  const selector = `${el.tag_name ?? ''}${(el.attr_class ?? []).map((c) => `.${c}`).join('')}${el.attr_id ? `#${el.attr_id}` : ''}`
  const extra = [...(el.href ? [['href', el.href]] : []), ...Object.entries(el.attributes)]
  return (
    <li>
      <code>{selector || '(element)'}</code>
      {el.text && <> “{el.text}”</>}
      {extra.length > 0 && <span className="muted"> {extra.map(([k, v]) => `${k}="${v}"`).join(' ')}</span>}
    </li>
  )
}

/** Newest events, refreshed every 3 s, with filters and a detail panel. */
export default function ActivityPage() {
  const { base } = useSession()
  const [draft, setDraft] = useState<Filters>(NONE)
  const [filters, setFilters] = useState<Filters>(NONE)
  const [live, setLive] = useState(true)
  const [selected, setSelected] = useState<EventJson | null>(null)
  const events = useQuery({
    queryKey: ['events', base, filters],
    queryFn: () => api<EventListJson>(eventsUrl(base, filters)),
    refetchInterval: live ? 3000 : false,
  })
  // Older pages, fetched from the `next` cursor on demand; the live page above them keeps refreshing.
  const [older, setOlder] = useState<{ events: EventJson[]; next: string | null } | null>(null)
  useEffect(() => setOlder(null), [filters])
  const nextUrl = older ? older.next : events.data?.next ?? null
  const loadOlder = async () => {
    if (!nextUrl) return
    const url = new URL(nextUrl)
    const page = await api<EventListJson>(url.pathname + url.search)
    setOlder({ events: [...(older?.events ?? []), ...page.results], next: page.next })
  }
  const detail = useRef<HTMLDivElement>(null)
  // On a phone the details sit under the list: bring them into view.
  useEffect(() => {
    if (selected && window.matchMedia('(max-width: 760px)').matches) detail.current?.scrollIntoView({ block: 'start' })
  }, [selected])
  const set = (k: keyof Filters) => (e: { target: { value: string } }) => setDraft({ ...draft, [k]: e.target.value })

  return (
    <>
      <PageHeader title="Activity" description="The newest events, as they arrive.">
        <label className="check">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.target.checked)} />
          {live ? <span className="live">Live</span> : 'Paused'}
        </label>
      </PageHeader>
      <Card>
        <form className="row" onSubmit={(e) => { e.preventDefault(); setFilters(draft) }}>
          <Field label="Event"><input value={draft.event} onChange={set('event')} placeholder="$pageview" /></Field>
          <Field label="Person (distinct id)"><input value={draft.distinctId} onChange={set('distinctId')} /></Field>
          <Field label="Property"><input value={draft.propKey} onChange={set('propKey')} placeholder="$browser" /></Field>
          <Field label="equals"><input value={draft.propValue} onChange={set('propValue')} placeholder="(any value)" /></Field>
          <button className="btn primary">Filter</button>
          <button type="button" className="btn" onClick={() => { setDraft(NONE); setFilters(NONE) }}>Clear</button>
        </form>
      </Card>
      <div className={selected ? 'split' : ''}>
        <Card>
          <Loadable query={events}>
            {(page) => page.results.length === 0 ? <Empty>No events match.</Empty> : (
              <div className="table-wrap" tabIndex={0}>
                <table aria-label="Events">
                  <thead><tr><th>Event</th><th>Person</th><th className="hide-narrow">URL / source</th><th>When</th></tr></thead>
                  <tbody>
                    {[...page.results, ...(older?.events ?? []).filter((o) => !page.results.some((r) => r.id === o.id))].map((ev) => (
                      <tr key={ev.id} className={selected?.id === ev.id ? 'clickable selected' : 'clickable'} onClick={() => setSelected(ev)}>
                        <td><button type="button" className="link" onClick={() => setSelected(ev)}>{ev.event}</button></td>
                        <td className="mono">
                          {ev.person ? <Link href={`~/persons/${ev.person.uuid}`}>{String(ev.person.properties.email ?? ev.person.properties.name ?? ev.distinct_id)}</Link> : ev.distinct_id}
                        </td>
                        <td className="hide-narrow mono">{String(ev.properties.$current_url ?? ev.properties.$lib ?? '')}</td>
                        <td><Ago iso={ev.timestamp} /></td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                {nextUrl && <button type="button" className="btn" style={{ marginTop: 12 }} onClick={() => void loadOlder()}>Load older events</button>}
              </div>
            )}
          </Loadable>
        </Card>
        {selected && (
          <div ref={detail}>
          <Card title={selected.event} actions={<button type="button" className="btn small" onClick={() => setSelected(null)}>Close</button>}>
            <p className="muted mono">{selected.id} · {selected.timestamp}</p>
            {typeof selected.properties.$session_id === 'string' && selected.properties.$session_id && (
              <p className="row">
                <Link href={`~/sessions/${encodeURIComponent(selected.properties.$session_id)}`}>View session</Link>
                <Link href={`~/replay/${encodeURIComponent(selected.properties.$session_id)}?t=${Date.parse(selected.timestamp)}`}>Watch recording</Link>
              </p>
            )}
            <h3>Properties</h3>
            <table aria-label="Event properties">
              <tbody>
                {Object.entries(selected.properties).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => (
                  <tr key={k}><th scope="row" className="mono">{k}</th><td className="mono">{typeof v === 'string' ? v : JSON.stringify(v)}</td></tr>
                ))}
              </tbody>
            </table>
            <h3>Elements</h3>
            {(() => {
              // The chain read by the same parser as the events API's `elements` (src/domain/events).
              const elements = parseElementsChain(selected.elements_chain ?? '')
              return elements.length === 0 ? <p className="muted">No elements.</p> : (
                <ol className="mono" aria-label="Elements">{elements.map((el) => <ElementLine key={el.order} el={el} />)}</ol>
              )
            })()}
            <details><summary>Raw JSON</summary><JsonView value={selected} /></details>
          </Card>
          </div>
        )}
      </div>
    </>
  )
}
