import type { Builder, Exclusion, FunnelViz, FunnelWindowUnit } from './query-kinds.ts'
import { Field } from '../ui.tsx'

const VIZ: [FunnelViz, string][] = [['steps', 'Conversion steps'], ['time_to_convert', 'Time to convert'], ['trends', 'Conversion trends']]
const UNITS: FunnelWindowUnit[] = ['minute', 'hour', 'day', 'week', 'month']

/** A funnel's own controls: view, step order, conversion window, from/to steps, exclusions (PostHog's `funnelsFilter`). */
export function FunnelControls({ b, set }: { b: Builder; set: (b: Builder) => void }) {
  const up = <K extends keyof Builder>(k: K, v: Builder[K]) => set({ ...b, [k]: v })
  const steps = b.series.map((s, i) => `${i + 1}. ${s.actionName ?? (s.event || 'All events')}`)
  const last = steps.length - 1
  const stepOptions = (from: number, to: number) => steps.map((name, i) => (i >= from && i <= to ? <option key={i} value={i}>{name}</option> : null))
  const setExclusion = (i: number, x: Partial<Exclusion>) => up('exclusions', b.exclusions.map((e, j) => (j === i ? { ...e, ...x } : e)))
  return (
    <>
      <div className="row">
        <Field label="Funnel view">
          <select value={b.funnelViz} onChange={(e) => up('funnelViz', e.target.value as FunnelViz)}>{VIZ.map(([v, l]) => <option key={v} value={v}>{l}</option>)}</select>
        </Field>
        <Field label="Step order">
          <select value={b.funnelOrder} onChange={(e) => up('funnelOrder', e.target.value as Builder['funnelOrder'])}>
            <option value="ordered">Sequential</option><option value="strict">Strict order</option><option value="unordered">Any order</option>
          </select>
        </Field>
        <Field label="Conversion window">
          <input type="number" min={1} max={100000} value={b.funnelWindow} onChange={(e) => up('funnelWindow', Math.max(1, Number(e.target.value) || 1))} />
        </Field>
        <Field label="Window unit">
          <select value={b.funnelWindowUnit} onChange={(e) => up('funnelWindowUnit', e.target.value as FunnelWindowUnit)}>{UNITS.map((u) => <option key={u} value={u}>{u}s</option>)}</select>
        </Field>
        {b.funnelViz !== 'steps' && last > 0 && (
          <>
            <Field label="From step">
              <select value={Math.min(b.funnelFromStep, last - 1)} onChange={(e) => up('funnelFromStep', Number(e.target.value))}>{stepOptions(0, last - 1)}</select>
            </Field>
            <Field label="To step">
              <select value={Math.min(b.funnelToStep ?? last, last)} onChange={(e) => up('funnelToStep', Number(e.target.value))}>{stepOptions(b.funnelFromStep + 1, last)}</select>
            </Field>
          </>
        )}
      </div>
      {last > 0 && (
        <fieldset className="stack exclusions">
          <legend>Exclusions</legend>
          {b.funnelOrder === 'unordered' && b.exclusions.length > 0 && <p className="hint">Exclusions apply to sequential and strict funnels only.</p>}
          {b.exclusions.map((x, i) => (
            <div className="row" key={i}>
              <Field label={`Excluded event ${i + 1}`}><input list="event-names" value={x.event} onChange={(e) => setExclusion(i, { event: e.target.value })} placeholder="$pageleave" /></Field>
              <Field label={`Between step (exclusion ${i + 1})`}>
                <select value={x.from} onChange={(e) => setExclusion(i, { from: Number(e.target.value), to: Math.max(x.to, Number(e.target.value) + 1) })}>{stepOptions(0, last - 1)}</select>
              </Field>
              <Field label={`And step (exclusion ${i + 1})`}>
                <select value={x.to} onChange={(e) => setExclusion(i, { to: Number(e.target.value) })}>{stepOptions(x.from + 1, last)}</select>
              </Field>
              <button type="button" className="btn small" onClick={() => up('exclusions', b.exclusions.filter((_, j) => j !== i))}>Remove exclusion {i + 1}</button>
            </div>
          ))}
          <div><button type="button" className="btn small" onClick={() => up('exclusions', [...b.exclusions, { event: '', from: 0, to: last }])}>Add exclusion</button></div>
        </fieldset>
      )}
    </>
  )
}
