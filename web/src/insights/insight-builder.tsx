import type { Builder, Display } from './query-kinds.ts'
import { KINDS } from './query-kinds.ts'
import { Field } from '../ui.tsx'
import { FunnelControls } from './funnel-builder.tsx'
import { PathsControls } from './paths-builder.tsx'

const MATHS = [['total', 'Total count'], ['dau', 'Unique users'], ['weekly_active', 'Weekly active'], ['monthly_active', 'Monthly active']] as const
const RANGES = [['-24h', 'Last 24 hours'], ['-7d', 'Last 7 days'], ['-14d', 'Last 14 days'], ['-30d', 'Last 30 days'], ['-90d', 'Last 90 days'], ['mStart', 'This month'], ['-1y', 'Last year']] as const
const DISPLAYS: [Display, string][] = [['ActionsLineGraph', 'Line'], ['ActionsBar', 'Bar'], ['BoldNumber', 'Number'], ['ActionsTable', 'Table']]

/** The controls of each insight kind; `events` feeds the event pickers. */
export function InsightBuilder({ b, set, events, actions }: { b: Builder; set: (b: Builder) => void; events: string[]; actions: { id: number; name: string | null }[] }) {
  const up = <K extends keyof Builder>(k: K, v: Builder[K]) => set({ ...b, [k]: v })
  const hasSeries = b.kind !== 'HogQLQuery' && b.kind !== 'PathsQuery'
  const hasRange = b.kind !== 'HogQLQuery'
  const multi = b.kind === 'TrendsQuery' || b.kind === 'FunnelsQuery' || b.kind === 'StickinessQuery'
  const label = b.kind === 'FunnelsQuery' ? 'Step' : b.kind === 'RetentionQuery' ? 'First event' : 'Series'
  return (
    <div className="stack">
      <div className="tabs" role="tablist" aria-label="Insight type">
        {KINDS.map(([k, name]) => <button key={k} type="button" role="tab" aria-selected={b.kind === k} onClick={() => up('kind', k)}>{name}</button>)}
      </div>
      <datalist id="event-names">{events.map((e) => <option key={e} value={e} />)}</datalist>
      {b.kind === 'HogQLQuery' && (
        <Field label="SQL" hint="PostHog's SQL: tables events and persons, properties.$browser, count(), uniq()…">
          <textarea rows={8} value={b.sql} onChange={(e) => up('sql', e.target.value)} spellCheck={false} />
        </Field>
      )}
      {hasSeries && (b.kind === 'LifecycleQuery' || b.kind === 'RetentionQuery' ? b.series.slice(0, 1) : b.series).map((s, i) => (
        <div className="row" key={i}>
          {b.kind !== 'RetentionQuery' && actions.length > 0 && (
            <Field label={`Type of ${label.toLowerCase()} ${multi ? i + 1 : ''}`.trim()}>
              <select
                value={s.actionId === undefined ? 'event' : String(s.actionId)}
                onChange={(e) => {
                  const action = actions.find((a) => String(a.id) === e.target.value)
                  up('series', b.series.map((x, j) => (j === i ? { ...x, actionId: action?.id, actionName: action?.name ?? undefined } : x)))
                }}
              >
                <option value="event">Event</option>
                {actions.map((a) => <option key={a.id} value={a.id}>Action: {a.name}</option>)}
              </select>
            </Field>
          )}
          {s.actionId === undefined && (
            <Field label={`${label} ${multi ? i + 1 : ''}`.trim()}>
              <input list="event-names" value={s.event} onChange={(e) => up('series', b.series.map((x, j) => (j === i ? { ...x, event: e.target.value } : x)))} placeholder="$pageview" />
            </Field>
          )}
          {b.kind === 'TrendsQuery' && (
            <Field label="Counted as">
              <select value={s.math} onChange={(e) => up('series', b.series.map((x, j) => (j === i ? { ...x, math: e.target.value } : x)))}>
                {MATHS.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
              </select>
            </Field>
          )}
          {multi && b.series.length > 1 && <button type="button" className="btn small" onClick={() => up('series', b.series.filter((_, j) => j !== i))}>Remove</button>}
        </div>
      ))}
      {multi && <div><button type="button" className="btn small" onClick={() => up('series', [...b.series, { event: '', math: 'total' }])}>{b.kind === 'FunnelsQuery' ? 'Add step' : 'Add series'}</button></div>}
      {b.kind === 'RetentionQuery' && (
        <div className="row">
          <Field label="Came back to"><input list="event-names" value={b.retentionReturning} onChange={(e) => up('retentionReturning', e.target.value)} placeholder="(same event)" /></Field>
          <Field label="Period">
            <select value={b.retentionPeriod} onChange={(e) => up('retentionPeriod', e.target.value as Builder['retentionPeriod'])}><option>Day</option><option>Week</option><option>Month</option></select>
          </Field>
          <Field label="Retention type">
            <select value={b.retentionType} onChange={(e) => up('retentionType', e.target.value as Builder['retentionType'])}>
              <option value="retention_first_time">First time</option><option value="retention_recurring">Recurring</option>
            </select>
          </Field>
          <Field label="Periods per cohort"><input type="number" min={1} max={100} value={b.retentionIntervals} onChange={(e) => up('retentionIntervals', Math.min(100, Math.max(1, Number(e.target.value) || 1)))} /></Field>
        </div>
      )}
      {b.kind === 'PathsQuery' && <PathsControls b={b} set={set} />}
      {hasRange && (
        <div className="row">
          <Field label="Date range">
            <select value={b.dateFrom} onChange={(e) => up('dateFrom', e.target.value)}>{RANGES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}</select>
          </Field>
          {b.kind !== 'RetentionQuery' && b.kind !== 'PathsQuery' && (b.kind !== 'FunnelsQuery' || b.funnelViz === 'trends') && (
            <Field label="Interval">
              <select value={b.interval} onChange={(e) => up('interval', e.target.value as Builder['interval'])}><option>hour</option><option>day</option><option>week</option><option>month</option></select>
            </Field>
          )}
          {(b.kind === 'TrendsQuery' || (b.kind === 'FunnelsQuery' && b.funnelViz === 'steps')) && <Field label="Breakdown by event property"><input value={b.breakdown} onChange={(e) => up('breakdown', e.target.value)} placeholder="$browser" /></Field>}
          <Field label="Where property"><input value={b.propKey} onChange={(e) => up('propKey', e.target.value)} placeholder="$current_url" /></Field>
          <Field label="equals"><input value={b.propValue} onChange={(e) => up('propValue', e.target.value)} placeholder="(is set)" /></Field>
        </div>
      )}
      {b.kind === 'TrendsQuery' && (
        <div className="row">
          <Field label="Show as">
            <select value={b.display} onChange={(e) => up('display', e.target.value as Display)}>{DISPLAYS.map(([v, l]) => <option key={v} value={v}>{l}</option>)}</select>
          </Field>
          <label className="check"><input type="checkbox" checked={b.compare} onChange={(e) => up('compare', e.target.checked)} /> Compare to previous period</label>
        </div>
      )}
      {b.kind === 'FunnelsQuery' && <FunnelControls b={b} set={set} />}
    </div>
  )
}
