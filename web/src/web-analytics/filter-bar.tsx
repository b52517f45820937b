import { useState } from 'react'
import { Card, Field } from '../ui.tsx'
import { GoalPicker } from './goal-picker.tsx'
import { DATE_OPTIONS, filterText, toggleFilter, type WebFilter, type WebState } from './web-filters.ts'

const TYPE_LABEL: Record<WebFilter['type'], string> = { event: 'Event', session: 'Session', person: 'Person' }

/** Date range, compare, test accounts, and the property filters (added here or by clicking a row). */
export function FilterBar({ state, onChange }: { state: WebState; onChange: (s: WebState) => void }) {
  const [key, setKey] = useState('')
  const [value, setValue] = useState('')
  const [type, setType] = useState<WebFilter['type']>('event')
  return (
    <Card>
      <div className="row web-controls">
        <Field label="Date range">
          <select value={state.dateFrom} onChange={(e) => onChange({ ...state, dateFrom: e.target.value })}>
            {DATE_OPTIONS.map(([v, label]) => <option key={v} value={v}>{label}</option>)}
          </select>
        </Field>
        <label className="check">
          <input type="checkbox" checked={state.compare} onChange={(e) => onChange({ ...state, compare: e.target.checked })} />
          Compare to previous period
        </label>
        <label className="check">
          <input type="checkbox" checked={state.filterTestAccounts} onChange={(e) => onChange({ ...state, filterTestAccounts: e.target.checked })} />
          Exclude test accounts
        </label>
        <GoalPicker goal={state.goal} onChange={(goal) => onChange({ ...state, goal })} />
      </div>
      <form
        className="row web-controls"
        aria-label="Add a filter"
        onSubmit={(e) => {
          e.preventDefault()
          if (!key.trim() || !value) return
          onChange(toggleFilter(state, { key: key.trim(), type, operator: 'exact', value: [value] }))
          setKey('')
          setValue('')
        }}
      >
        <Field label="Filter on">
          <select value={type} onChange={(e) => setType(e.target.value as WebFilter['type'])}>
            {Object.entries(TYPE_LABEL).map(([t, label]) => <option key={t} value={t}>{label} property</option>)}
          </select>
        </Field>
        <Field label="Property"><input value={key} onChange={(e) => setKey(e.target.value)} placeholder="$pathname" /></Field>
        <Field label="equals"><input value={value} onChange={(e) => setValue(e.target.value)} placeholder="/pricing" required /></Field>
        <button className="btn">Add filter</button>
      </form>
      {state.filters.length > 0 && (
        <ul className="web-chips" aria-label="Filters">
          {state.filters.map((f) => (
            <li key={`${f.type}:${f.key}:${f.operator}:${f.value.join()}`} className="web-chip">
              <span><span className="muted">{TYPE_LABEL[f.type]}</span> <code>{f.key}</code> <strong>{filterText(f)}</strong></span>
              <button type="button" className="btn small" aria-label={`Remove filter ${f.key} ${filterText(f)}`} onClick={() => onChange({ ...state, filters: state.filters.filter((g) => g !== f) })}>×</button>
            </li>
          ))}
          <li><button type="button" className="btn small" onClick={() => onChange({ ...state, filters: [] })}>Clear filters</button></li>
        </ul>
      )}
    </Card>
  )
}
