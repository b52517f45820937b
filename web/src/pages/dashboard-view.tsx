import { useState } from 'react'
import { Link } from 'wouter'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Card, Empty, ErrorBox, Field, Loadable, PageHeader } from '../ui.tsx'
import { InsightResult } from '../insights/insight-result.tsx'
import { sourceOf, type Display, type Kind } from '../insights/query-kinds.ts'
import { useQueryResult } from '../insights/run-query.ts'
import type { DashboardJson, DashboardListJson, ListJson, TileJson } from '../../../src/http/wire-types.ts'

const RANGES = [['', 'Each insight’s own range'], ['-24h', 'Last 24 hours'], ['-7d', 'Last 7 days'], ['-30d', 'Last 30 days'], ['-90d', 'Last 90 days']] as const

/** A dashboard: its tiles in a grid, a date-range override for all of them, text cards, moving tiles. */
export function DashboardView({ id }: { id: number }) {
  const { base } = useSession()
  const queryClient = useQueryClient()
  const key = ['dashboard', base, id]
  const dashboard = useQuery({ queryKey: key, queryFn: () => api<DashboardJson>(`${base}/dashboards/${id}/`) })
  const others = useQuery({ queryKey: ['dashboards', base], queryFn: () => api<ListJson<DashboardListJson>>(`${base}/dashboards/?limit=200`) })
  const [force, setForce] = useState(0)
  const [text, setText] = useState('')
  const patch = useMutation({
    mutationFn: (body: Record<string, unknown>) => api<DashboardJson>(`${base}/dashboards/${id}/`, { method: 'PATCH', body }),
    onSuccess: (d) => queryClient.setQueryData(key, d),
  })
  const move = useMutation({
    mutationFn: ({ tile, to }: { tile: number; to: number }) => api<DashboardJson>(`${base}/dashboards/${id}/move_tile/`, { method: 'PATCH', body: { tile: { id: tile }, toDashboard: to } }),
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
        return (
          <>
            <PageHeader title={d.name || 'Untitled dashboard'} description={d.description}>
              <Field label="Date range">
                <select value={dateFrom} onChange={(e) => patch.mutate({ filters: { ...d.filters, date_from: e.target.value || null } })}>
                  {RANGES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
                </select>
              </Field>
              <button type="button" className="btn" style={{ alignSelf: 'flex-end' }} onClick={() => setForce(force + 1)}>Refresh</button>
            </PageHeader>
            {(patch.error || move.error) && <ErrorBox error={patch.error ?? move.error} />}
            {tiles.length === 0 ? <Empty>No tiles yet. Add an insight from its page, or a text card below.</Empty> : (
              <div className="tiles">
                {tiles.map((t) => (
                  <Card
                    key={t.id}
                    title={t.insight ? <Link href={`~/insights/${t.insight.id}`}>{t.insight.name || 'Untitled insight'}</Link> : 'Note'}
                    actions={targets.length > 0 && (
                      <select aria-label="Move tile to dashboard" value="" onChange={(e) => e.target.value && move.mutate({ tile: t.id, to: Number(e.target.value) })}>
                        <option value="">Move to…</option>
                        {targets.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
                      </select>
                    )}
                  >
                    <div className="tile">{t.insight ? <InsightTile tile={t} dateFrom={dateFrom} force={force} /> : <p className="text-card">{t.text?.body}</p>}</div>
                  </Card>
                ))}
              </div>
            )}
            <Card title="Add a text card">
              <form className="stack" onSubmit={(e) => { e.preventDefault(); patch.mutate({ tiles: [{ text: { body: text } }] }); setText('') }}>
                <Field label="Text"><textarea rows={3} value={text} onChange={(e) => setText(e.target.value)} required /></Field>
                <div><button className="btn">Add text card</button></div>
              </form>
            </Card>
          </>
        )
      }}
    </Loadable>
  )
}

/** An insight tile: its query run with the dashboard's date range when one is set. */
function InsightTile({ tile, dateFrom, force }: { tile: TileJson; dateFrom: string; force: number }) {
  const { base } = useSession()
  const source = sourceOf(tile.insight!.query)
  const query = source && dateFrom && source.kind !== 'HogQLQuery' ? { ...source, dateRange: { ...(source.dateRange as object), date_from: dateFrom } } : source
  const result = useQueryResult(base, query, { force })
  if (!source) return <Empty>This insight has no query.</Empty>
  const display = (source.trendsFilter as { display?: Display } | undefined)?.display
  return <Loadable query={result}>{(r) => <InsightResult kind={source.kind as Kind} display={display} result={r} small />}</Loadable>
}
