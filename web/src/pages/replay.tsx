import { useState } from 'react'
import { Link, Route, Switch, useParams, useSearch } from 'wouter'
import { useQuery } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Ago, Badge, Card, Empty, ErrorBox, Field, JsonView, Loadable, PageHeader } from '../ui.tsx'
import { Player, type TimelineEvent } from '../replay/player.tsx'
import { loadSnapshots } from '../replay/snapshots.ts'
import type { PersonDetailJson, RecordingJson, RecordingListJson } from '../../../src/http/wire-types.ts'

export default function ReplayPage() {
  return (
    <Switch>
      <Route path="/:id" component={RecordingView} />
      <Route component={RecordingList} />
    </Switch>
  )
}

const duration = (s: number) => (s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m` : `${Math.floor(s / 60)}m ${s % 60}s`)
const PAGE = 50

interface Filters {
  dateFrom: string
  minDuration: string
  errorsOnly: boolean
  event: string
}

function listQuery(f: Filters, personUuid: string | null, offset: number): string {
  const q = new URLSearchParams({ date_from: f.dateFrom, limit: String(PAGE), offset: String(offset) })
  if (personUuid) q.set('person_uuid', personUuid)
  if (f.minDuration) q.set('having_predicates', JSON.stringify([{ type: 'recording', key: 'duration', operator: 'gt', value: Number(f.minDuration) }]))
  if (f.errorsOnly) q.set('console_log_filters', JSON.stringify([{ key: 'level', value: ['error'], operator: 'exact', type: 'log_entry' }]))
  if (f.event.trim()) q.set('events', JSON.stringify([{ id: f.event.trim(), type: 'events' }]))
  return q.toString()
}

function RecordingList() {
  const { base } = useSession()
  const personUuid = new URLSearchParams(useSearch()).get('person_uuid')
  const [draft, setDraft] = useState<Filters>({ dateFrom: '-3d', minDuration: '', errorsOnly: false, event: '' })
  const [applied, setApplied] = useState(draft)
  const [offset, setOffset] = useState(0)
  const list = useQuery({
    queryKey: ['recordings', base, applied, personUuid, offset],
    queryFn: () => api<RecordingListJson>(`${base}/session_recordings/?${listQuery(applied, personUuid, offset)}`),
  })
  return (
    <>
      <PageHeader title="Replay" description="Session recordings: what people did on your site, played back with its events and console." />
      <Card>
        <form className="row" onSubmit={(e) => { e.preventDefault(); setApplied(draft); setOffset(0) }} aria-label="Recording filters">
          <Field label="Recorded">
            <select value={draft.dateFrom} onChange={(e) => setDraft({ ...draft, dateFrom: e.target.value })}>
              <option value="-24h">Last 24 hours</option>
              <option value="-3d">Last 3 days</option>
              <option value="-7d">Last 7 days</option>
              <option value="-30d">Last 30 days</option>
              <option value="all">All time</option>
            </select>
          </Field>
          <Field label="Longer than (seconds)"><input type="number" min={0} value={draft.minDuration} onChange={(e) => setDraft({ ...draft, minDuration: e.target.value })} /></Field>
          <Field label="Performed event"><input value={draft.event} placeholder="$pageview" onChange={(e) => setDraft({ ...draft, event: e.target.value })} /></Field>
          <label><input type="checkbox" checked={draft.errorsOnly} onChange={(e) => setDraft({ ...draft, errorsOnly: e.target.checked })} /> With console errors</label>
          <button className="btn primary">Apply</button>
        </form>
        {personUuid && <p className="muted">Recordings of one person. <Link href="/">Show everyone's</Link></p>}
      </Card>
      <Card>
        <Loadable query={list}>
          {(page) => page.results.length === 0 ? <Empty>No recordings match. Turn recording on in Settings, then visit your site.</Empty> : (
            <>
              <div className="table-wrap" tabIndex={0}>
                <table aria-label="Recordings">
                  <thead><tr><th>Person</th><th>Start</th><th>Duration</th><th className="hide-narrow">Clicks</th><th className="hide-narrow">Errors</th><th className="hide-narrow">First URL</th></tr></thead>
                  <tbody>
                    {page.results.map((r) => (
                      <tr key={r.id}>
                        <td><Link href={`/${encodeURIComponent(r.id)}`}>{(r.person as PersonDetailJson | null)?.name ?? r.distinct_id}</Link></td>
                        <td><Ago iso={r.start_time} /></td>
                        <td>{duration(r.recording_duration)}</td>
                        <td className="hide-narrow">{r.click_count}</td>
                        <td className="hide-narrow">{r.console_error_count > 0 ? <Badge tone="danger">{r.console_error_count}</Badge> : 0}</td>
                        <td className="hide-narrow mono">{r.start_url ?? ''}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <div className="row">
                <button type="button" className="btn" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>Previous</button>
                <button type="button" className="btn" disabled={!page.has_next} onClick={() => setOffset(offset + PAGE)}>Next</button>
              </div>
            </>
          )}
        </Loadable>
      </Card>
    </>
  )
}

/** The session's analytics events (an EventsQuery on `$session_id`), for the player's timeline. */
async function sessionEvents(base: string, r: RecordingJson): Promise<TimelineEvent[]> {
  const margin = 60_000
  const res = await api<{ results: unknown[][] }>(`${base}/query/`, {
    method: 'POST',
    body: {
      query: {
        kind: 'EventsQuery',
        select: ['uuid', 'event', 'timestamp', 'properties.$current_url'],
        properties: [{ key: '$session_id', value: r.id, operator: 'exact', type: 'event' }],
        after: new Date(Date.parse(r.start_time) - margin).toISOString(),
        before: new Date(Date.parse(r.end_time) + margin).toISOString(),
        orderBy: ['timestamp ASC'],
        limit: 1000,
      },
    },
  })
  return res.results.map((row) => ({ uuid: String(row[0]), event: String(row[1]), timestamp: Date.parse(String(row[2])), url: (row[3] as string | null) ?? null }))
}

function RecordingView() {
  const { base } = useSession()
  const { id } = useParams<{ id: string }>()
  const t = Number(new URLSearchParams(useSearch()).get('t')) || undefined
  const meta = useQuery({ queryKey: ['recording', base, id], queryFn: () => api<RecordingJson>(`${base}/session_recordings/${encodeURIComponent(id)}/`) })
  const snapshots = useQuery({ queryKey: ['snapshots', base, id], queryFn: () => loadSnapshots(base, id), staleTime: Infinity })
  const timeline = useQuery({ queryKey: ['recording-events', base, id], queryFn: () => sessionEvents(base, meta.data!), enabled: !!meta.data })
  const person = meta.data?.person as PersonDetailJson | null | undefined
  return (
    <>
      <PageHeader title="Recording" description={meta.data ? `${meta.data.start_url ?? ''}` : undefined}>
        <Link href="/" className="btn">All recordings</Link>
      </PageHeader>
      <div className="replay-layout">
        <Card>
          {snapshots.error ? <ErrorBox error={snapshots.error} /> : !snapshots.data ? <p className="muted" role="status">Loading the recording…</p> : (
            <Player events={snapshots.data} timeline={timeline.data ?? []} startAt={t} />
          )}
        </Card>
        <Card title="Person">
          <Loadable query={meta}>
            {(r) => (
              <div>
                <p>{person ? <Link href={`~/persons/${encodeURIComponent(person.uuid)}`}>{person.name}</Link> : <span className="mono">{r.distinct_id}</span>}</p>
                <p className="muted">{duration(r.recording_duration)} · {r.active_seconds}s active · {r.click_count} clicks · {r.console_error_count} console errors</p>
                {person && <details open><summary>Properties</summary><JsonView value={person.properties} /></details>}
              </div>
            )}
          </Loadable>
        </Card>
      </div>
    </>
  )
}
