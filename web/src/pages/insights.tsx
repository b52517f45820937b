import { useMemo, useState } from 'react'
import { Link, Route, Switch, useLocation, useParams } from 'wouter'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Ago, Card, Empty, ErrorBox, Field, Loadable, PageHeader } from '../ui.tsx'
import { InsightBuilder } from '../insights/insight-builder.tsx'
import { InsightResult } from '../insights/insight-result.tsx'
import { DEFAULT_BUILDER, fromQuery, KINDS, sourceOf, toQuery, wrap, type Builder } from '../insights/query-kinds.ts'
import { useQueryResult } from '../insights/run-query.ts'
import { useEventNames } from '../insights/event-names.ts'
import type { ActionJson, DashboardListJson, InsightJson, ListJson } from '../../../src/http/wire-types.ts'

export default function InsightsPage() {
  return (
    <Switch>
      <Route path="/new">{() => <InsightEditor insight={null} />}</Route>
      <Route path="/:id" component={SavedInsight} />
      <Route component={InsightList} />
    </Switch>
  )
}

const kindName = (q: unknown) => KINDS.find(([k]) => k === sourceOf(q)?.kind)?.[1] ?? 'Insight'

function InsightList() {
  const { base } = useSession()
  const insights = useQuery({ queryKey: ['insights', base], queryFn: () => api<ListJson<InsightJson>>(`${base}/insights/?limit=200`) })
  return (
    <>
      <PageHeader title="Insights" description="Trends, funnels, retention, lifecycle, stickiness and SQL over your events.">
        <Link href="/new" className="btn primary">New insight</Link>
      </PageHeader>
      <Card>
        <Loadable query={insights}>
          {(page) => page.results.length === 0 ? <Empty>No saved insights yet.</Empty> : (
            <div className="table-wrap" tabIndex={0}>
              <table aria-label="Insights">
                <thead><tr><th>Name</th><th>Type</th><th className="hide-narrow">Dashboards</th><th className="hide-narrow">Modified</th></tr></thead>
                <tbody>
                  {page.results.map((i) => (
                    <tr key={i.id}>
                      <td><Link href={`/${i.id}`}>{i.name || i.derived_name || `Insight ${i.short_id}`}</Link></td>
                      <td>{kindName(i.query)}</td>
                      <td className="hide-narrow">{i.dashboards.length}</td>
                      <td className="hide-narrow"><Ago iso={i.last_modified_at} /></td>
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

function SavedInsight() {
  const { base } = useSession()
  const { id } = useParams<{ id: string }>()
  const insight = useQuery({ queryKey: ['insight', base, id], queryFn: () => api<InsightJson>(`${base}/insights/${id}/`) })
  return <Loadable query={insight}>{(i) => <InsightEditor key={i.id} insight={i} />}</Loadable>
}

function InsightEditor({ insight }: { insight: InsightJson | null }) {
  const { base } = useSession()
  const [, navigate] = useLocation()
  const queryClient = useQueryClient()
  const [b, setB] = useState<Builder>(() => (insight ? fromQuery(insight.query) : DEFAULT_BUILDER))
  const [ran, setRan] = useState<Builder>(b)
  const [name, setName] = useState(insight?.name ?? '')
  const [dashboard, setDashboard] = useState('')
  const events = useEventNames(base)
  const actions = useQuery({ queryKey: ['actions', base], queryFn: () => api<ListJson<ActionJson>>(`${base}/actions/?limit=200`) })
  // A saved insight shown as saved reads its cached result (computed by the server if missing or
  // stale); once the builder's query differs, it runs through the query API.
  const ranQuery = useMemo(() => toQuery(ran), [ran])
  const asSaved = insight !== null && JSON.stringify(ranQuery) === JSON.stringify(toQuery(fromQuery(insight.query)))
  const saved = useQuery({
    queryKey: ['insight-result', base, insight?.id, insight?.last_modified_at],
    queryFn: () => api<InsightJson>(`${base}/insights/${insight!.id}/?refresh=blocking`),
    enabled: asSaved,
    retry: false,
    select: (i) => ({ results: i.result, ...('columns' in i ? { columns: i.columns } : {}) }) as Record<string, unknown>,
  })
  const adhoc = useQueryResult(base, asSaved ? null : ranQuery)
  const result = asSaved ? saved : adhoc
  const dashboards = useQuery({ queryKey: ['dashboards', base], queryFn: () => api<ListJson<DashboardListJson>>(`${base}/dashboards/?limit=200`) })
  const save = useMutation({
    mutationFn: () => {
      const body = { name: name || null, query: wrap(toQuery(b)) }
      return insight ? api<InsightJson>(`${base}/insights/${insight.id}/`, { method: 'PATCH', body }) : api<InsightJson>(`${base}/insights/`, { method: 'POST', body })
    },
    onSuccess: async (saved) => {
      setRan(b)
      queryClient.setQueryData(['insight', base, String(saved.id)], saved)
      await queryClient.invalidateQueries({ queryKey: ['insights', base] })
      if (!insight) navigate(`/${saved.id}`)
    },
  })
  const addToDashboard = useMutation({
    mutationFn: () => api<InsightJson>(`${base}/insights/${insight!.id}/`, { method: 'PATCH', body: { dashboards: [...new Set([...insight!.dashboards, Number(dashboard)])] } }),
    onSuccess: async (saved) => {
      queryClient.setQueryData(['insight', base, String(saved.id)], saved)
      await queryClient.invalidateQueries({ queryKey: ['dashboard', base, Number(dashboard)] })
    },
  })
  const onDashboards = (dashboards.data?.results ?? []).filter((d) => insight?.dashboards.includes(d.id))

  return (
    <>
      <PageHeader title={insight ? insight.name || `Insight ${insight.short_id}` : 'New insight'}>
        <button type="button" className="btn" onClick={() => setRan(b)}>Run</button>
      </PageHeader>
      <div className="split">
        <div>
          <Card><InsightBuilder b={b} set={setB} events={events} actions={actions.data?.results ?? []} /></Card>
          <Card title="Result">
            <Loadable query={result}>{(r) => <InsightResult kind={ran.kind} display={ran.display} result={r} query={ranQuery} />}</Loadable>
          </Card>
        </div>
        <div>
          <Card title="Save">
            <form className="stack" onSubmit={(e) => { e.preventDefault(); save.mutate() }}>
              <Field label="Name"><input value={name} onChange={(e) => setName(e.target.value)} required /></Field>
              <button className="btn primary" disabled={save.isPending}>{insight ? 'Save changes' : 'Save insight'}</button>
              {save.isSuccess && <p className="muted" role="status">Saved.</p>}
              {save.error && <ErrorBox error={save.error} />}
            </form>
          </Card>
          {insight && (
            <Card title="Dashboards">
              {onDashboards.length > 0 && <p>On {onDashboards.map((d) => <Link key={d.id} href={`~/dashboards/${d.id}`}>{d.name} </Link>)}</p>}
              <form className="row" onSubmit={(e) => { e.preventDefault(); addToDashboard.mutate() }}>
                <Field label="Add to dashboard">
                  <select value={dashboard} onChange={(e) => setDashboard(e.target.value)} required>
                    <option value="">Choose…</option>
                    {(dashboards.data?.results ?? []).map((d) => <option key={d.id} value={d.id}>{d.name}</option>)}
                  </select>
                </Field>
                <button className="btn" disabled={!dashboard || addToDashboard.isPending}>Add</button>
              </form>
              {addToDashboard.isSuccess && <p className="muted" role="status">Added.</p>}
              {addToDashboard.error && <ErrorBox error={addToDashboard.error} />}
            </Card>
          )}
        </div>
      </div>
    </>
  )
}
