import { useState } from 'react'
import { Link, Route, Switch, useLocation } from 'wouter'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Ago, Card, Empty, ErrorBox, Field, Loadable, PageHeader } from '../ui.tsx'
import { DashboardView } from './dashboard-view.tsx'
import { TEMPLATES } from './dashboard-templates.ts'
import type { DashboardJson, DashboardListJson, ListJson } from '../../../src/http/wire-types.ts'

export default function DashboardsPage() {
  return (
    <Switch>
      <Route path="/:id">{(p) => <DashboardView id={Number(p.id)} />}</Route>
      <Route component={DashboardList} />
    </Switch>
  )
}

function DashboardList() {
  const { base } = useSession()
  const [, navigate] = useLocation()
  const queryClient = useQueryClient()
  const dashboards = useQuery({ queryKey: ['dashboards', base], queryFn: () => api<ListJson<DashboardListJson>>(`${base}/dashboards/?limit=200`) })
  const [name, setName] = useState('')
  const [template, setTemplate] = useState('')
  const create = useMutation({
    mutationFn: () => {
      const t = TEMPLATES.find((x) => x.template_name === template)
      return t
        ? api<DashboardJson>(`${base}/dashboards/create_from_template_json/`, { method: 'POST', body: { template: name ? { ...t, template_name: name } : t } })
        : api<DashboardJson>(`${base}/dashboards/`, { method: 'POST', body: { name } })
    },
    onSuccess: async (d) => {
      await queryClient.invalidateQueries({ queryKey: ['dashboards', base] })
      navigate(`/${d.id}`)
    },
  })
  return (
    <>
      <PageHeader title="Dashboards" description="Insights side by side, with notes." />
      <Card title="New dashboard">
        <form className="row" onSubmit={(e) => { e.preventDefault(); create.mutate() }}>
          <Field label="Name"><input value={name} onChange={(e) => setName(e.target.value)} required={!template} /></Field>
          <Field label="Start from">
            <select value={template} onChange={(e) => setTemplate(e.target.value)}>
              <option value="">Blank dashboard</option>
              {TEMPLATES.map((t) => <option key={t.template_name} value={t.template_name}>Template: {t.template_name}</option>)}
            </select>
          </Field>
          <button className="btn primary" disabled={create.isPending}>Create</button>
        </form>
        {create.error && <ErrorBox error={create.error} />}
      </Card>
      <Card>
        <Loadable query={dashboards}>
          {(page) => page.results.length === 0 ? <Empty>No dashboards yet.</Empty> : (
            <table aria-label="Dashboards">
              <thead><tr><th>Name</th><th className="hide-narrow">Description</th><th>Created</th></tr></thead>
              <tbody>
                {page.results.map((d) => (
                  <tr key={d.id}>
                    <td><Link href={`/${d.id}`}>{d.name || 'Untitled'}</Link>{d.pinned ? ' 📌' : ''}</td>
                    <td className="hide-narrow">{d.description}</td>
                    <td><Ago iso={d.created_at} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Loadable>
      </Card>
    </>
  )
}
