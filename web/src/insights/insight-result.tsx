import { lazy, Suspense } from 'react'
import { Empty } from '../ui.tsx'
import type { Display, Kind } from './query-kinds.ts'

const EChart = lazy(() => import('../charts/echart.tsx'))

type Json = Record<string, unknown>
interface TrendSeries { label?: string; data?: number[]; labels?: string[]; days?: string[]; count?: number; aggregated_value?: number; breakdown_value?: unknown; compare_label?: string; status?: string }
interface FunnelStep { name?: string; custom_name?: string | null; count?: number; order?: number; average_conversion_time?: number | null; median_conversion_time?: number | null }
interface RetentionRow { date?: string; label?: string; values?: { count: number }[] }

// PostHog's lifecycle colours: growth in green and blue, loss in red.
const LIFECYCLE_COLORS: Record<string, string> = { new: '#2e7d32', returning: '#1d4aff', resurrecting: '#a621c8', dormant: '#d32f2f' }
const num = (n: number | undefined | null) => (n == null ? '—' : Number.isInteger(n) ? n.toLocaleString() : n.toFixed(2))
/** The series' label, with its breakdown value and compare label unless the label already says them. */
const seriesName = (s: TrendSeries) => {
  const label = s.label ?? ''
  const extra = [s.breakdown_value, s.compare_label].filter((v) => v != null && v !== '' && !label.includes(String(v))).map(String)
  return [label, ...extra].filter(Boolean).join(' · ') || 'Series'
}
const duration = (s: number | null | undefined) => (s == null ? '—' : s < 60 ? `${Math.round(s)}s` : s < 3600 ? `${Math.round(s / 60)}m` : `${(s / 3600).toFixed(1)}h`)
const Chart = (props: { option: Json; label: string; small?: boolean }) => (
  <Suspense fallback={<div className={props.small ? 'chart small' : 'chart'} />}><EChart {...props} /></Suspense>
)

/** A query's result drawn the way PostHog draws that kind (and display, for trends). */
export function InsightResult({ kind, display, result, small }: { kind: Kind; display?: Display; result: Json; small?: boolean }) {
  const results = result.results as unknown[] | undefined
  if (kind === 'HogQLQuery') return <SqlTable result={result} />
  if (!results || results.length === 0) return <Empty>No data for this range.</Empty>
  if (kind === 'FunnelsQuery') return <Funnel steps={(Array.isArray(results[0]) ? results[0] : results) as FunnelStep[]} small={small} />
  if (kind === 'RetentionQuery') return <RetentionGrid rows={results as RetentionRow[]} />
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
  return (
    <>
      <Chart option={option} label={`${kind} chart`} small={small} />
      {!small && (
        <table aria-label="Series totals">
          <tbody>{series.map((s, i) => <tr key={i}><td>{s.status ?? seriesName(s)}</td><td className="num">{num(s.count ?? s.aggregated_value)}</td></tr>)}</tbody>
        </table>
      )}
    </>
  )
}

function Funnel({ steps, small }: { steps: FunnelStep[]; small?: boolean }) {
  const first = steps[0]?.count || 0
  const rate = (c = 0) => (first ? `${((c / first) * 100).toFixed(1)}%` : '0%')
  const option = {
    tooltip: { trigger: 'axis' },
    grid: { left: 48, right: 16, top: 24, bottom: 32 },
    xAxis: { type: 'category', data: steps.map((s, i) => `${i + 1}. ${s.custom_name || s.name}`) },
    yAxis: { type: 'value' },
    series: [{ type: 'bar', data: steps.map((s) => s.count ?? 0), label: { show: true, position: 'top', formatter: (p: { value: number }) => rate(p.value) } }],
  }
  return (
    <>
      <Chart option={option} label="Funnel chart" small={small} />
      {!small && (
        <table aria-label="Funnel steps">
          <thead><tr><th>Step</th><th className="num">Count</th><th className="num">Conversion</th><th className="num">Avg. time</th><th className="num">Median time</th></tr></thead>
          <tbody>
            {steps.map((s, i) => (
              <tr key={i}><td>{i + 1}. {s.custom_name || s.name}</td><td className="num">{num(s.count)}</td><td className="num">{rate(s.count)}</td>
                <td className="num">{i ? duration(s.average_conversion_time) : ''}</td><td className="num">{i ? duration(s.median_conversion_time) : ''}</td></tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  )
}

/** The cohort grid, each cell shaded by its share of the cohort (a heatmap as PostHog shows it). */
function RetentionGrid({ rows }: { rows: RetentionRow[] }) {
  const width = Math.max(...rows.map((r) => r.values?.length ?? 0))
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="retention" aria-label="Retention">
        <thead><tr><th>Cohort</th>{Array.from({ length: width }, (_, i) => <th key={i} className="num">{i === 0 ? 'Size' : `+${i}`}</th>)}</tr></thead>
        <tbody>
          {rows.map((r, i) => {
            const size = r.values?.[0]?.count ?? 0
            return (
              <tr key={i}>
                <th scope="row">{r.date ? new Date(r.date).toLocaleDateString() : r.label}</th>
                {(r.values ?? []).map((v, j) => {
                  const share = size ? v.count / size : 0
                  return <td key={j} style={{ background: `rgba(29,74,255,${(share * 0.85).toFixed(2)})`, color: share > 0.5 ? '#fff' : undefined }}>{j === 0 ? size : `${Math.round(share * 100)}%`}</td>
                })}
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

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
