import { useEffect, useState } from 'react'
import { Link } from 'wouter'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Card, Empty, ErrorBox, Field, Loadable, PageHeader } from '../ui.tsx'
import { InsightResult } from '../insights/insight-result.tsx'
import { sourceOf, type Display, type Kind } from '../insights/query-kinds.ts'
import { WebStatsTile } from '../web-analytics/web-stats-tile.tsx'
import type { DashboardJson, DashboardListJson, ListJson, TileJson } from '../../../src/http/wire-types.ts'

const RANGES = [['', 'Each insight’s own range'], ['-24h', 'Last 24 hours'], ['-7d', 'Last 7 days'], ['-30d', 'Last 30 days'], ['-90d', 'Last 90 days']] as const

/** Oldest first: the dashboard is as old as its oldest tile result (PostHog's "Last computed"). */
function oldestRefresh(tiles: TileJson[]): string | null {
  const times = tiles.map((t) => t.insight?.last_refresh ?? t.last_refresh).filter((x): x is string => typeof x === 'string')
  return times.length ? times.reduce((a, b) => (Date.parse(a) <= Date.parse(b) ? a : b)) : null
}

/**
 * A dashboard: its tiles in a grid with the results the server computed for the dashboard
 * (`?refresh=blocking`: cached ones while fresh), a Refresh that asks it to recompute them all
 * (`force_blocking`), a date-range override for all of them, text cards, moving tiles.
 */
export function DashboardView({ id }: { id: number }) {
  const { base } = useSession()
  const queryClient = useQueryClient()
  const key = ['dashboard', base, id]
  const url = `${base}/dashboards/${id}/`
  const dashboard = useQuery({ queryKey: key, queryFn: () => api<DashboardJson>(`${url}?refresh=blocking`) })
  const others = useQuery({ queryKey: ['dashboards', base], queryFn: () => api<ListJson<DashboardListJson>>(`${base}/dashboards/?limit=200`) })
  const [text, setText] = useState('')
  const refresh = useMutation({
    mutationFn: () => api<DashboardJson>(`${url}?refresh=force_blocking`),
    onSuccess: (d) => queryClient.setQueryData(key, d),
  })
  // A write answers without tile results: read the dashboard again (fresh results come from the cache).
  const patch = useMutation({
    mutationFn: (body: Record<string, unknown>) => api<DashboardJson>(url, { method: 'PATCH', body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: key }),
  })
  const move = useMutation({
    mutationFn: ({ tile, to }: { tile: number; to: number }) => api<DashboardJson>(`${url}move_tile/`, { method: 'PATCH', body: { tile: { id: tile }, toDashboard: to } }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['dashboard', base] })
    },
  })
  return (
    <Loadable query={dashboard}>
      {(d) => {
        const dateFrom = typeof d.filters.date_from === 'string' ? d.filters.date_from : ''
        const tiles = d.tiles.filter((t) => !t.deleted)
        const targets = (others.data?.results ?? []).filter((o) => o.id !== d.id)
        const computed = oldestRefresh(tiles)
        // PostHog's privilege levels: 37 edits, 21 only views (a restricted dashboard of someone else).
        const canEdit = d.effective_privilege_level >= 37
        return (
          <>
            <PageHeader title={d.name || 'Untitled dashboard'} description={d.description}>
              <Field label="Date range">
                <select value={dateFrom} disabled={!canEdit} onChange={(e) => patch.mutate({ filters: { ...d.filters, date_from: e.target.value || null } })}>
                  {RANGES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
                </select>
              </Field>
              <div className="refresh">
                <button type="button" className="btn" disabled={refresh.isPending} onClick={() => refresh.mutate()}>{refresh.isPending ? 'Refreshing…' : 'Refresh'}</button>
                {computed && <span className="muted" data-testid="last-computed">Last computed <LastComputed iso={computed} /></span>}
              </div>
            </PageHeader>
            {(patch.error || move.error || refresh.error) && <ErrorBox error={patch.error ?? move.error ?? refresh.error} />}
            {!canEdit && <p className="muted" role="note">You can view this dashboard; only its creator and admins change it.</p>}
            {tiles.length === 0 ? <Empty>No tiles yet. Add an insight from its page, or a text card below.</Empty> : (
              <div className="tiles">
                {tiles.map((t) => (
                  <Card
                    key={t.id}
                    title={t.insight ? <Link href={`~/insights/${t.insight.id}`}>{t.insight.name || 'Untitled insight'}</Link> : 'Note'}
                    actions={canEdit && targets.length > 0 && (
                      <select aria-label="Move tile to dashboard" value="" onChange={(e) => e.target.value && move.mutate({ tile: t.id, to: Number(e.target.value) })}>
                        <option value="">Move to…</option>
                        {targets.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
                      </select>
                    )}
                  >
                    <div className="tile">
                      {!t.insight ? <p className="text-card">{t.text?.body}</p> : <ServerTile tile={t} />}
                    </div>
                  </Card>
                ))}
              </div>
            )}
            {canEdit && <Card title="Add a text card">
              <form className="stack" onSubmit={(e) => { e.preventDefault(); patch.mutate({ tiles: [{ text: { body: text } }] }); setText('') }}>
                <Field label="Text"><textarea rows={3} value={text} onChange={(e) => setText(e.target.value)} required /></Field>
                <div><button className="btn">Add text card</button></div>
              </form>
            </Card>}
          </>
        )
      }}
    </Loadable>
  )
}

/** "3 minutes ago", kept current while the page stays open. */
function LastComputed({ iso }: { iso: string }) {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 30_000)
    return () => clearInterval(timer)
  }, [])
  const minutes = Math.max(0, Math.floor((now - Date.parse(iso)) / 60_000))
  const text = minutes < 1 ? 'less than a minute ago' : minutes < 60 ? `${minutes} minute${minutes === 1 ? '' : 's'} ago`
    : minutes < 48 * 60 ? `${Math.floor(minutes / 60)} hour${minutes < 120 ? '' : 's'} ago` : `${Math.floor(minutes / 1440)} days ago`
  return <time dateTime={iso} title={new Date(iso).toLocaleString()}>{text}</time>
}

function kindOf(tile: TileJson) {
  const source = sourceOf(tile.insight!.query)
  return { source, kind: source?.kind as Kind | undefined, display: (source?.trendsFilter as { display?: Display } | undefined)?.display }
}

/** An insight tile as the dashboard read gave it: the server's result, never recomputed here. */
function ServerTile({ tile }: { tile: TileJson }) {
  const { source, kind, display } = kindOf(tile)
  const insight = tile.insight!
  if (!source || !kind) return <Empty>This insight has no query.</Empty>
  if (insight.result == null) return <Empty>No result yet: Refresh computes it.</Empty>
  const columns = 'columns' in insight ? { columns: insight.columns } : {}
  if (source.kind === 'WebStatsTableQuery') return <WebStatsTile breakdownBy={String(source.breakdownBy)} response={{ results: insight.result, ...columns }} />
  return <InsightResult kind={kind} display={display} result={{ results: insight.result, ...columns }} small />
}

