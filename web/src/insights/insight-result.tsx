import { memo, useMemo, useState } from 'react'
import { Empty } from '../ui.tsx'
import { insightActorsPick, type ActorsPick, type ChartPick, type PersonsOpener } from './actors.ts'
import type { Display, Kind } from './query-kinds.ts'
import { Chart } from './chart.tsx'
import { num } from './format.ts'
import { FunnelResult } from './funnel-result.tsx'
import { PathsResult, type PathEdge } from './paths-result.tsx'
import { PersonsModal } from './persons-modal.tsx'
import { RetentionResult, type RetentionRow } from './retention-result.tsx'

type Json = Record<string, unknown>
interface TrendSeries { label?: string; data?: number[]; labels?: string[]; days?: (string | number)[]; count?: number; aggregated_value?: number; breakdown_value?: unknown; compare_label?: string; status?: string; action?: { order?: number } | null }

// PostHog's lifecycle colours: growth in green and blue, loss in red.
const LIFECYCLE_COLORS: Record<string, string> = { new: '#2e7d32', returning: '#1d4aff', resurrecting: '#a621c8', dormant: '#d32f2f' }
/** The series' label, with its breakdown value and compare label unless the label already says them. */
const seriesName = (s: TrendSeries) => {
  const label = s.label ?? ''
  const extra = [s.breakdown_value, s.compare_label].filter((v) => v != null && v !== '' && !label.includes(String(v))).map(String)
  return [label, ...extra].filter(Boolean).join(' · ') || 'Series'
}
interface ResultProps { kind: Kind; display?: Display; result: Json; small?: boolean }

/**
 * A query's result drawn the way PostHog draws that kind (and display, for trends). Given the
 * `query` that computed it, a click on a bar or a point lists the persons behind it in a modal.
 */
export function InsightResult({ query, ...props }: ResultProps & { query?: Json }) {
  const [pick, setPick] = useState<ActorsPick | null>(null)
  const persons = useMemo(() => (query && !props.small ? { query, open: setPick } : undefined), [query, props.small])
  return (
    <>
      <ResultView {...props} persons={persons} />
      {pick && <PersonsModal pick={pick} onClose={() => setPick(null)} />}
    </>
  )
}

// Memoised so opening the modal does not redraw the chart (which would reset its legend's choices).
const ResultView = memo(function ResultView({ kind, display, result, small, persons }: ResultProps & { persons?: PersonsOpener }) {
  const results = result.results as unknown[] | undefined
  if (kind === 'HogQLQuery') return <SqlTable result={result} />
  if (kind === 'FunnelsQuery') return <FunnelResult results={results} small={small} persons={persons} />
  if (!results || results.length === 0) return <Empty>No data for this range.</Empty>
  if (kind === 'PathsQuery') return <PathsResult edges={results as PathEdge[]} small={small} persons={persons} />
  if (kind === 'RetentionQuery') return <RetentionResult rows={results as RetentionRow[]} small={small} />
  const series = results as TrendSeries[]
  if (kind === 'TrendsQuery' && display === 'BoldNumber') {
    return <div className="stat" style={{ fontSize: 48, padding: '24px 0' }} data-testid="bold-number">{num(series[0]?.aggregated_value ?? series[0]?.count)}</div>
  }
  if (kind === 'TrendsQuery' && display === 'ActionsTable') {
    return (
      <table aria-label="Insight result">
        <thead><tr><th>Series</th><th className="num">Total</th></tr></thead>
        <tbody>{series.map((s, i) => <tr key={i}><td>{seriesName(s)}</td><td className="num">{num(s.aggregated_value ?? s.count)}</td></tr>)}</tbody>
      </table>
    )
  }
  const stacked = kind === 'LifecycleQuery'
  const bar = stacked || kind === 'StickinessQuery' || display === 'ActionsBar'
  const option = {
    tooltip: { trigger: 'axis' },
    legend: { type: 'scroll', bottom: 0 },
    grid: { left: 48, right: 16, top: 16, bottom: 48 },
    xAxis: { type: 'category', data: series[0]?.labels ?? series[0]?.days ?? [] },
    yAxis: { type: 'value' },
    series: series.map((s) => ({
      name: s.status ?? seriesName(s), type: bar ? 'bar' : 'line', data: s.data ?? [], smooth: false, showSymbol: false,
      ...(stacked ? { stack: 'lifecycle' } : {}),
      ...(s.status && LIFECYCLE_COLORS[s.status] ? { itemStyle: { color: LIFECYCLE_COLORS[s.status] } } : {}),
    })),
  }
  const onPick = persons && ((at: ChartPick) => {
    const pick = insightActorsPick(persons.query, series, (s) => s.status ?? seriesName(s), at)
    if (pick) persons.open(pick)
  })
  return (
    <>
      <Chart option={option} label={`${kind} chart`} small={small} onPick={onPick} pickColumn={!bar} />
      {onPick && <p className="hint">Click a {bar ? 'bar' : 'point'} to see the persons behind it.</p>}
      {!small && (
        <table aria-label="Series totals">
          <tbody>{series.map((s, i) => <tr key={i}><td>{s.status ?? seriesName(s)}</td><td className="num">{num(s.aggregated_value ?? s.count)}</td></tr>)}</tbody>
        </table>
      )}
    </>
  )
})

function SqlTable({ result }: { result: Json }) {
  const columns = (result.columns as string[] | undefined) ?? []
  const rows = (result.results as unknown[][] | undefined) ?? []
  if (rows.length === 0) return <Empty>The query returned no rows.</Empty>
  return (
    <div className="table-wrap" tabIndex={0}>
      <table aria-label="Query results" className="sql-results">
        <thead><tr>{columns.map((c) => <th key={c}>{c}</th>)}</tr></thead>
        <tbody>{rows.map((r, i) => <tr key={i}>{r.map((v, j) => <td key={j} className="mono">{typeof v === 'object' ? JSON.stringify(v) : String(v)}</td>)}</tr>)}</tbody>
      </table>
    </div>
  )
}
