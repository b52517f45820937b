import { useState } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Badge, Card, Empty, ErrorBox, Field, Loadable, PageHeader } from '../ui.tsx'
import type { CohortJson, ListJson } from '../../../src/http/wire-types.ts'
import { COHORT_OPERATORS, editorValue, takesValue } from '../operators.ts'

interface Condition { key: string; operator: string; value: string }

/** PostHog's cohort filters: one AND group of person-property conditions. */
function toFilters(conditions: Condition[]) {
  return {
    properties: {
      type: 'OR',
      values: [{ type: 'AND', values: conditions.filter((c) => c.key).map((c) => ({ type: 'person', key: c.key, operator: c.operator, value: editorValue(c.operator, c.value) })) }],
    },
  }
}

function describe(c: CohortJson): string {
  if (c.is_static) return 'Static list'
  const text = JSON.stringify(c.filters ?? c.groups)
  const keys = [...text.matchAll(/"key":"([^"]+)"/g)].map((m) => m[1])
  return keys.length ? `Person ${keys.join(', ')}` : 'All people'
}

type Filter = { type?: string; key?: string; operator?: string; value?: unknown; values?: Filter[] }

/** The person-property conditions of a cohort made of one AND group (what this page creates), else null. */
function simpleConditions(c: CohortJson): Filter[] | null {
  const root = (c.filters as { properties?: Filter } | null)?.properties
  const groups = root?.values ?? []
  if (c.is_static || groups.length !== 1) return null
  const conditions = groups[0].values ?? []
  return conditions.length > 0 && conditions.every((f) => f.type === 'person' && f.key) ? conditions : null
}

/**
 * The cohort's size: the stored count, else the persons API counting the people whose properties
 * match its conditions (the same SQL filters), for cohorts made of one group of person conditions.
 */
function CohortSize({ base, cohort }: { base: string; cohort: CohortJson }) {
  const conditions = cohort.count == null ? simpleConditions(cohort) : null
  const q = useQuery({
    queryKey: ['cohort-size', base, cohort.id, cohort.filters],
    queryFn: () => api<{ count: number }>(`${base}/persons/?limit=1&include_total=true&properties=${encodeURIComponent(JSON.stringify(conditions))}`),
    enabled: conditions !== null,
  })
  if (cohort.count != null) return <>{cohort.count.toLocaleString()}</>
  if (!conditions || q.error) return <span title="Counted when the cohort is used">—</span>
  return <>{q.data ? q.data.count.toLocaleString() : '…'}</>
}

/** Cohorts: groups of people by their properties (or a static list), with their size. */
export default function CohortsPage() {
  const { base } = useSession()
  const queryClient = useQueryClient()
  const cohorts = useQuery({ queryKey: ['cohorts', base], queryFn: () => api<ListJson<CohortJson>>(`${base}/cohorts/?limit=200`) })
  const [creating, setCreating] = useState(false)
  const [name, setName] = useState('')
  const [conditions, setConditions] = useState<Condition[]>([{ key: '', operator: 'exact', value: '' }])
  const create = useMutation({
    mutationFn: () => api<CohortJson>(`${base}/cohorts/`, { method: 'POST', body: { name, filters: toFilters(conditions) } }),
    onSuccess: async () => {
      setCreating(false)
      setName('')
      setConditions([{ key: '', operator: 'exact', value: '' }])
      await queryClient.invalidateQueries({ queryKey: ['cohorts', base] })
    },
  })
  const set = (i: number, k: keyof Condition, v: string) => setConditions(conditions.map((c, j) => (j === i ? { ...c, [k]: v } : c)))

  return (
    <>
      <PageHeader title="Cohorts" description="Groups of people, for flags and insights.">
        <button type="button" className="btn primary" onClick={() => setCreating(!creating)}>{creating ? 'Cancel' : 'New cohort'}</button>
      </PageHeader>
      {creating && (
        <Card title="New cohort">
          <form className="stack" onSubmit={(e) => { e.preventDefault(); create.mutate() }}>
            <Field label="Name"><input value={name} onChange={(e) => setName(e.target.value)} required /></Field>
            <p className="muted">People whose properties match all of:</p>
            {conditions.map((c, i) => (
              <div className="row" key={i}>
                <Field label="Person property"><input value={c.key} onChange={(e) => set(i, 'key', e.target.value)} placeholder="email" /></Field>
                <Field label="Operator">
                  <select value={c.operator} onChange={(e) => set(i, 'operator', e.target.value)}>
                    {COHORT_OPERATORS.map(([v, label]) => <option key={v} value={v}>{label}</option>)}
                  </select>
                </Field>
                {takesValue(c.operator) && <Field label="Value"><input value={c.value} onChange={(e) => set(i, 'value', e.target.value)} /></Field>}
              </div>
            ))}
            <div className="row">
              <button type="button" className="btn" onClick={() => setConditions([...conditions, { key: '', operator: 'exact', value: '' }])}>Add condition</button>
              <button className="btn primary" disabled={create.isPending}>Save cohort</button>
            </div>
            {create.error && <ErrorBox error={create.error} />}
          </form>
        </Card>
      )}
      <Card>
        <Loadable query={cohorts}>
          {(page) => page.results.length === 0 ? <Empty>No cohorts yet.</Empty> : (
            <div className="table-wrap" tabIndex={0}>
              <table aria-label="Cohorts">
                <thead><tr><th>Name</th><th className="hide-narrow">Definition</th><th className="num">People</th></tr></thead>
                <tbody>
                  {page.results.map((c) => (
                    <tr key={c.id}>
                      <td><strong>{c.name}</strong> {c.is_static && <Badge>static</Badge>}</td>
                      <td className="hide-narrow">{describe(c)}</td>
                      <td className="num"><CohortSize base={base} cohort={c} /></td>
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
