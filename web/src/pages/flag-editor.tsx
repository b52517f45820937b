import { useState } from 'react'
import { useLocation } from 'wouter'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Card, ErrorBox, Field, PageHeader } from '../ui.tsx'
import type { CursorListJson, FlagJson, PersonJson } from '../../../src/http/wire-types.ts'
import { editorValue, FLAG_OPERATORS, takesValue } from '../operators.ts'

/** `isList`: the stored value was a list (PostHog's exact match on several values), edited as `a, b`. */
interface Condition { rollout: number; props: { key: string; operator: string; value: string; isList?: boolean; type?: string }[] }
interface Variant { key: string; rollout: number }


/**
 * Person property names for the pickers: the person property definitions ingestion keeps, or where
 * there are none (people made before definitions were kept) or that API does not answer, the keys
 * the 100 most recent people have.
 */
function usePersonPropertyNames(base: string): string[] {
  const q = useQuery({
    queryKey: ['property-names', base, 'person'],
    queryFn: async () => {
      try {
        const names = (await api<{ results: { name: string }[] }>(`${base}/property_definitions/?type=person&limit=500`)).results.map((d) => d.name)
        if (names.length > 0) return names
      } catch {
        // Answered below from the people themselves.
      }
      const people = await api<CursorListJson<PersonJson>>(`${base}/persons/?limit=100`)
      return [...new Set(people.results.flatMap((p) => Object.keys(p.properties)))].sort()
    },
    retry: false,
  })
  return q.data ?? []
}

function fromFlag(f: FlagJson | null) {
  const groups = f?.filters.groups ?? [{ properties: [], rollout_percentage: 100 }]
  return {
    key: f?.key ?? '',
    name: f?.name ?? '',
    active: f?.active ?? true,
    conditions: groups.map((g): Condition => ({
      rollout: g.rollout_percentage ?? 100,
      props: (g.properties ?? []).map((p) => ({ key: p.key, operator: String(p.operator ?? 'exact'), value: Array.isArray(p.value) ? p.value.join(', ') : String(p.value ?? ''), isList: Array.isArray(p.value), type: p.type ?? 'person' })),
    })),
    variants: (f?.filters.multivariate?.variants ?? []).map((v): Variant => ({ key: v.key, rollout: v.rollout_percentage })),
    payloads: Object.fromEntries(Object.entries(f?.filters.payloads ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])),
  }
}
type Draft = ReturnType<typeof fromFlag>

function toBody(d: Draft) {
  const payloads = Object.fromEntries(Object.entries(d.payloads).filter(([, v]) => v.trim() !== ''))
  return {
    key: d.key,
    name: d.name,
    active: d.active,
    filters: {
      groups: d.conditions.map((c) => ({
        rollout_percentage: c.rollout,
        properties: c.props.filter((p) => p.key).map((p) => ({ key: p.key, type: p.type ?? 'person', operator: p.operator, value: editorValue(p.operator, p.value, p.isList) })),
      })),
      multivariate: d.variants.length ? { variants: d.variants.map((v) => ({ key: v.key, rollout_percentage: v.rollout })) } : null,
      payloads,
    },
  }
}

/** Create or edit a flag: key, rollout, release conditions, variants and payloads. */
export function FlagEditor({ flag }: { flag: FlagJson | null }) {
  const { base } = useSession()
  const [, navigate] = useLocation()
  const queryClient = useQueryClient()
  const [d, setD] = useState<Draft>(() => fromFlag(flag))
  const names = usePersonPropertyNames(base)
  const save = useMutation({
    mutationFn: () => flag
      ? api<FlagJson>(`${base}/feature_flags/${flag.id}/`, { method: 'PATCH', body: toBody(d) })
      : api<FlagJson>(`${base}/feature_flags/`, { method: 'POST', body: toBody(d) }),
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: ['flags', base] })
      queryClient.setQueryData(['flag', base, String(saved.id)], saved)
      navigate(`/${saved.id}`)
    },
  })
  const setCond = (i: number, c: Condition) => setD({ ...d, conditions: d.conditions.map((x, j) => (j === i ? c : x)) })
  const payloadKeys = d.variants.length ? d.variants.map((v) => v.key).filter(Boolean) : ['true']

  return (
    <form onSubmit={(e) => { e.preventDefault(); save.mutate() }}>
      <PageHeader title={flag ? `Flag ${flag.key}` : 'New feature flag'}>
        <button className="btn primary" disabled={save.isPending}>{save.isPending ? 'Saving…' : 'Save flag'}</button>
      </PageHeader>
      {save.error && <ErrorBox error={save.error} />}
      <Card title="Flag">
        <div className="grid-2">
          <Field label="Key" hint="What your code asks for."><input value={d.key} onChange={(e) => setD({ ...d, key: e.target.value })} required pattern="[A-Za-z0-9_\-]+" /></Field>
          <Field label="Description"><input value={d.name} onChange={(e) => setD({ ...d, name: e.target.value })} /></Field>
        </div>
        <label className="check" style={{ marginTop: 12 }}><input type="checkbox" checked={d.active} onChange={(e) => setD({ ...d, active: e.target.checked })} /> Enabled</label>
      </Card>
      <Card title="Release conditions" actions={<button type="button" className="btn small" onClick={() => setD({ ...d, conditions: [...d.conditions, { rollout: 100, props: [] }] })}>Add condition set</button>}>
        <datalist id="person-properties">{names.map((n) => <option key={n} value={n} />)}</datalist>
        {d.conditions.map((c, i) => (
          <div className="condition" key={i}>
            <div className="row" style={{ justifyContent: 'space-between' }}>
              <strong>Condition set {i + 1}</strong>
              {d.conditions.length > 1 && <button type="button" className="btn small danger" onClick={() => setD({ ...d, conditions: d.conditions.filter((_, j) => j !== i) })}>Remove</button>}
            </div>
            {c.props.map((p, k) => (
              <div className="row" key={k} style={{ marginTop: 8 }}>
                <Field label={p.type === 'cohort' ? 'Cohort id' : 'Person property'}><input list="person-properties" value={p.key} onChange={(e) => setCond(i, { ...c, props: c.props.map((x, m) => (m === k ? { ...x, key: e.target.value } : x)) })} /></Field>
                <Field label="Operator">
                  <select value={p.operator} onChange={(e) => setCond(i, { ...c, props: c.props.map((x, m) => (m === k ? { ...x, operator: e.target.value } : x)) })}>
                    {FLAG_OPERATORS.map(([v, label]) => <option key={v} value={v}>{label}</option>)}
                  </select>
                </Field>
                {takesValue(p.operator) && <Field label="Value"><input value={p.value} onChange={(e) => setCond(i, { ...c, props: c.props.map((x, m) => (m === k ? { ...x, value: e.target.value } : x)) })} /></Field>}
                <button type="button" className="btn small" onClick={() => setCond(i, { ...c, props: c.props.filter((_, m) => m !== k) })}>Remove</button>
              </div>
            ))}
            <div className="row" style={{ marginTop: 8 }}>
              <button type="button" className="btn small" onClick={() => setCond(i, { ...c, props: [...c.props, { key: '', operator: 'exact', value: '' }] })}>Add property filter</button>
              <Field label="Roll out to (%)"><input type="number" min={0} max={100} value={c.rollout} onChange={(e) => setCond(i, { ...c, rollout: Number(e.target.value) })} /></Field>
            </div>
          </div>
        ))}
      </Card>
      <Card title="Variants" actions={<button type="button" className="btn small" onClick={() => setD({ ...d, variants: [...d.variants, { key: '', rollout: 0 }] })}>Add variant</button>}>
        {d.variants.length === 0 ? <p className="muted">A boolean flag: on or off. Add variants for a multivariate flag (their rollouts add up to 100).</p> : d.variants.map((v, i) => (
          <div className="row" key={i} style={{ marginBottom: 8 }}>
            <Field label="Variant key"><input value={v.key} required onChange={(e) => setD({ ...d, variants: d.variants.map((x, j) => (j === i ? { ...x, key: e.target.value } : x)) })} /></Field>
            <Field label="Rollout (%)"><input type="number" min={0} max={100} value={v.rollout} onChange={(e) => setD({ ...d, variants: d.variants.map((x, j) => (j === i ? { ...x, rollout: Number(e.target.value) } : x)) })} /></Field>
            <button type="button" className="btn small danger" onClick={() => setD({ ...d, variants: d.variants.filter((_, j) => j !== i) })}>Remove</button>
          </div>
        ))}
      </Card>
      <Card title="Payloads">
        {payloadKeys.map((k) => (
          <Field key={k} label={`Payload when ${k === 'true' ? 'enabled' : `variant is ${k}`} (JSON)`}>
            <textarea rows={2} value={d.payloads[k] ?? ''} onChange={(e) => setD({ ...d, payloads: { ...d.payloads, [k]: e.target.value } })} />
          </Field>
        ))}
      </Card>
    </form>
  )
}
