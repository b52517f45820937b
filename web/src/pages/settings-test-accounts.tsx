import { useState } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '../api.ts'
import { useSession } from '../session.tsx'
import { COHORT_OPERATORS, editorValue, takesValue } from '../operators.ts'
import { Card, ErrorBox, Field } from '../ui.tsx'

interface TestAccountFilter { key: string; type: 'event' | 'person'; operator: string; value?: unknown }

/**
 * PostHog's "Filter out internal and test users": the project's `test_account_filters`, which the
 * queries apply when asked to exclude test accounts (the Web analytics page's switch).
 */
export function TestAccounts() {
  const { project, base, canManage } = useSession()
  const queryClient = useQueryClient()
  const current = (project.test_account_filters ?? []) as unknown as TestAccountFilter[]
  const [draft, setDraft] = useState({ type: 'person' as TestAccountFilter['type'], key: '', operator: 'not_icontains', value: '' })
  const save = useMutation({
    mutationFn: (filters: TestAccountFilter[]) => api(`${base}/`, { method: 'PATCH', body: { test_account_filters: filters } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['session'] }),
  })
  const describe = (f: TestAccountFilter) => `${f.type === 'person' ? 'Person' : 'Event'} ${f.key} ${COHORT_OPERATORS.find(([o]) => o === f.operator)?.[1] ?? f.operator}${takesValue(f.operator) ? ` ${Array.isArray(f.value) ? f.value.join(', ') : String(f.value ?? '')}` : ''}`
  return (
    <Card title="Test accounts">
      <p className="muted">Where "Exclude test accounts" is on (the Web analytics page, queries that ask for it), only events matching all of these count, as in PostHog: describe your real users, e.g. person email does not contain @mycompany.com.</p>
      {current.length === 0 ? <p className="muted">No test account filters.</p> : (
        <ul aria-label="Test account filters" className="switches">
          {current.map((f, i) => (
            <li key={i} className="row">
              <span>{describe(f)}</span>
              {canManage && <button type="button" className="btn small" aria-label={`Remove ${describe(f)}`} onClick={() => save.mutate(current.filter((_, j) => j !== i))}>Remove</button>}
            </li>
          ))}
        </ul>
      )}
      {canManage && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault()
            const f: TestAccountFilter = { type: draft.type, key: draft.key.trim(), operator: draft.operator, value: editorValue(draft.operator, draft.value) }
            save.mutate([...current, f], { onSuccess: () => setDraft({ ...draft, key: '', value: '' }) })
          }}
        >
          <Field label="Test account property of">
            <select value={draft.type} onChange={(e) => setDraft({ ...draft, type: e.target.value as TestAccountFilter['type'] })}>
              <option value="person">a person</option>
              <option value="event">an event</option>
            </select>
          </Field>
          <Field label="Test account property"><input value={draft.key} onChange={(e) => setDraft({ ...draft, key: e.target.value })} placeholder="email" required /></Field>
          <Field label="Test account operator">
            <select value={draft.operator} onChange={(e) => setDraft({ ...draft, operator: e.target.value })}>
              {COHORT_OPERATORS.map(([o, label]) => <option key={o} value={o}>{label}</option>)}
            </select>
          </Field>
          {takesValue(draft.operator) && <Field label="Test account value"><input value={draft.value} onChange={(e) => setDraft({ ...draft, value: e.target.value })} placeholder="@mycompany.com" required /></Field>}
          <button className="btn primary" disabled={save.isPending}>Add filter</button>
        </form>
      )}
      {save.error && <ErrorBox error={save.error} />}
    </Card>
  )
}
