import { DEFAULT_EDGE_LIMIT, type Builder, type CleaningRule, type PathType } from './query-kinds.ts'
import { Field } from '../ui.tsx'

const TYPES: [PathType, string][] = [['$pageview', 'Page views'], ['$screen', 'Screen views'], ['custom_event', 'Custom events']]

/** A whole number of at least 1 typed in a box, or null when the box is empty (or holds anything else). */
const wholeOrNull = (text: string): number | null => (/^\d+$/.test(text.trim()) && Number(text) >= 1 ? Math.min(Number(text), 10_000) : null)

/**
 * A paths insight's own controls (PostHog's `pathsFilter`): event types, start and end point, step
 * limit, the edge limit and weights (PostHog's advanced options), cleaning rules.
 */
export function PathsControls({ b, set }: { b: Builder; set: (b: Builder) => void }) {
  const up = <K extends keyof Builder>(k: K, v: Builder[K]) => set({ ...b, [k]: v })
  const setRule = (i: number, r: Partial<CleaningRule>) => up('pathCleaning', b.pathCleaning.map((x, j) => (j === i ? { ...x, ...r } : x)))
  return (
    <>
      <fieldset className="stack exclusions">
        <legend>Events on the paths</legend>
        <div className="row">
          {TYPES.map(([t, label]) => (
            <label className="check" key={t}>
              <input type="checkbox" checked={b.pathTypes.includes(t)} onChange={(e) => up('pathTypes', e.target.checked ? [...b.pathTypes, t] : b.pathTypes.filter((x) => x !== t))} /> {label}
            </label>
          ))}
        </div>
        {b.pathTypes.length === 0 && <p className="hint">No type chosen: every event is on the paths.</p>}
      </fieldset>
      <div className="row">
        <Field label="Starts at"><input list="event-names" value={b.pathStart} onChange={(e) => up('pathStart', e.target.value)} placeholder="URL, screen or event" /></Field>
        <Field label="Ends at"><input list="event-names" value={b.pathEnd} onChange={(e) => up('pathEnd', e.target.value)} placeholder="URL, screen or event" /></Field>
        <Field label="Steps">
          <input type="number" min={2} max={20} value={b.pathSteps} onChange={(e) => up('pathSteps', Math.min(20, Math.max(2, Number(e.target.value) || 5)))} />
        </Field>
      </div>
      <div className="row">
        <Field label="Maximum number of paths">
          <input type="number" min={1} max={10000} value={b.pathEdgeLimit ?? ''} onChange={(e) => up('pathEdgeLimit', wholeOrNull(e.target.value))} placeholder={String(DEFAULT_EDGE_LIMIT)} />
        </Field>
        <Field label="Minimum path weight">
          <input type="number" min={1} value={b.pathMinWeight ?? ''} onChange={(e) => up('pathMinWeight', wholeOrNull(e.target.value))} placeholder="any" />
        </Field>
        <Field label="Maximum path weight">
          <input type="number" min={1} value={b.pathMaxWeight ?? ''} onChange={(e) => up('pathMaxWeight', wholeOrNull(e.target.value))} placeholder="any" />
        </Field>
      </div>
      <fieldset className="stack exclusions">
        <legend>Path cleaning rules</legend>
        {b.pathCleaning.map((r, i) => (
          <div className="row" key={i}>
            <Field label={`Regex (rule ${i + 1})`}><input value={r.regex} onChange={(e) => setRule(i, { regex: e.target.value })} placeholder="/product/\d+" spellCheck={false} /></Field>
            <Field label={`Replace with (rule ${i + 1})`}><input value={r.alias} onChange={(e) => setRule(i, { alias: e.target.value })} placeholder="/product/:id" spellCheck={false} /></Field>
            <button type="button" className="btn small" onClick={() => up('pathCleaning', b.pathCleaning.filter((_, j) => j !== i))}>Remove rule {i + 1}</button>
          </div>
        ))}
        <div><button type="button" className="btn small" onClick={() => up('pathCleaning', [...b.pathCleaning, { regex: '', alias: '' }])}>Add cleaning rule</button></div>
      </fieldset>
    </>
  )
}
