import { useState } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { Ago, Card, Empty, ErrorBox, Field, Loadable, PageHeader } from '../ui.tsx'
import type { ActionJson, ListJson } from '../../../src/http/wire-types.ts'

interface StepDraft { event: string; url: string; url_matching: string; text: string; selector: string }
const NEW_STEP: StepDraft = { event: '$pageview', url: '', url_matching: 'contains', text: '', selector: '' }

/** How many events matched the action (`/actions/:id/count/`). */
function ActionCount({ base, id }: { base: string; id: number }) {
  const q = useQuery({ queryKey: ['action-count', base, id], queryFn: () => api<{ count: number }>(`${base}/actions/${id}/count/`) })
  if (q.error) return <span className="muted">n/a</span>
  return <span>{q.data ? q.data.count.toLocaleString() : '…'}</span>
}

function stepText(s: ActionJson['steps'][number]): string {
  const parts = [s.event ?? 'any event']
  if (s.url) parts.push(`URL ${s.url_matching ?? 'contains'} "${s.url}"`)
  if (s.text) parts.push(`text "${s.text}"`)
  if (s.selector) parts.push(`selector ${s.selector}`)
  return parts.join(', ')
}

/** Actions: named groups of events (steps), with the number of events each matches. */
export default function ActionsPage() {
  const { base } = useSession()
  const queryClient = useQueryClient()
  const actions = useQuery({ queryKey: ['actions', base], queryFn: () => api<ListJson<ActionJson>>(`${base}/actions/?limit=200`) })
  const [creating, setCreating] = useState(false)
  const [name, setName] = useState('')
  const [steps, setSteps] = useState<StepDraft[]>([NEW_STEP])
  const create = useMutation({
    mutationFn: () => api<ActionJson>(`${base}/actions/`, {
      method: 'POST',
      body: {
        name,
        steps: steps.map((s) => ({
          event: s.event || null, url: s.url || null, url_matching: s.url ? s.url_matching : null,
          text: s.text || null, selector: s.selector || null,
        })),
      },
    }),
    onSuccess: async () => {
      setCreating(false)
      setName('')
      setSteps([NEW_STEP])
      await queryClient.invalidateQueries({ queryKey: ['actions', base] })
    },
  })
  const setStep = (i: number, k: keyof StepDraft, v: string) => setSteps(steps.map((s, j) => (j === i ? { ...s, [k]: v } : s)))

  return (
    <>
      <PageHeader title="Actions" description="Name a set of events once, use it in insights and cohorts.">
        <button type="button" className="btn primary" onClick={() => setCreating(!creating)}>{creating ? 'Cancel' : 'New action'}</button>
      </PageHeader>
      {creating && (
        <Card title="New action">
          <form className="stack" onSubmit={(e) => { e.preventDefault(); create.mutate() }}>
            <Field label="Name"><input value={name} onChange={(e) => setName(e.target.value)} required /></Field>
            {steps.map((s, i) => (
              <div className="condition" key={i}>
                <strong>{i === 0 ? 'Match events where' : 'Or where'}</strong>
                <div className="row" style={{ marginTop: 8 }}>
                  <Field label="Event name"><input value={s.event} onChange={(e) => setStep(i, 'event', e.target.value)} /></Field>
                  <Field label="URL"><input value={s.url} onChange={(e) => setStep(i, 'url', e.target.value)} /></Field>
                  <Field label="URL matching">
                    <select value={s.url_matching} onChange={(e) => setStep(i, 'url_matching', e.target.value)}>
                      <option value="contains">contains</option><option value="exact">exactly</option><option value="regex">regex</option>
                    </select>
                  </Field>
                  <Field label="Element text"><input value={s.text} onChange={(e) => setStep(i, 'text', e.target.value)} /></Field>
                  <Field label="CSS selector"><input value={s.selector} onChange={(e) => setStep(i, 'selector', e.target.value)} /></Field>
                  {steps.length > 1 && <button type="button" className="btn small danger" onClick={() => setSteps(steps.filter((_, j) => j !== i))}>Remove</button>}
                </div>
              </div>
            ))}
            <div className="row">
              <button type="button" className="btn" onClick={() => setSteps([...steps, NEW_STEP])}>Add step</button>
              <button className="btn primary" disabled={create.isPending}>Save action</button>
            </div>
            {create.error && <ErrorBox error={create.error} />}
          </form>
        </Card>
      )}
      <Card>
        <Loadable query={actions}>
          {(page) => page.results.length === 0 ? <Empty>No actions yet.</Empty> : (
            <div className="table-wrap" tabIndex={0}>
              <table aria-label="Actions">
                <thead><tr><th>Name</th><th className="hide-narrow">Steps</th><th className="num">Events</th><th className="hide-narrow">Created</th></tr></thead>
                <tbody>
                  {page.results.map((a) => (
                    <tr key={a.id}>
                      <td><strong>{a.name}</strong></td>
                      <td className="hide-narrow">{a.steps.map(stepText).join(' or ')}</td>
                      <td className="num"><ActionCount base={base} id={a.id} /></td>
                      <td className="hide-narrow"><Ago iso={a.created_at} /></td>
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
