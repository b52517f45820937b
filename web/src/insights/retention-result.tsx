import { Chart } from './chart.tsx'

/** One cohort row of PostHog's `RetentionQuery` results: its start, and who came back in each period. */
export interface RetentionRow { date?: string; label?: string; values?: { count: number; label?: string }[] }

const BLUE = [29, 74, 255]
const channel = (c: number) => {
  const s = c / 255
  return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
}
const luminance = (rgb: number[]) => 0.2126 * channel(rgb[0]) + 0.7152 * channel(rgb[1]) + 0.0722 * channel(rgb[2])

/** A cell's heat: blue as strong as the share, and whichever text colour reads better on it (WCAG contrast). */
export function heat(share: number): { background: string; color: string } {
  const alpha = Math.min(1, Math.max(0, share)) * 0.9
  const rgb = BLUE.map((c) => Math.round(255 - alpha * (255 - c)))
  const l = luminance(rgb)
  const onWhite = 1.05 / (l + 0.05)
  const onDark = (l + 0.05) / (luminance([26, 28, 35]) + 0.05)
  return { background: `rgb(${rgb.join(',')})`, color: onWhite > onDark ? '#fff' : '#1a1c23' }
}

/**
 * Mean retention (%) per period: the simple mean over the cohorts that have reached that period
 * and are not empty (PostHog's default "simple" mean).
 */
export function meanRetention(rows: RetentionRow[]): number[] {
  const width = Math.max(0, ...rows.map((r) => r.values?.length ?? 0))
  return Array.from({ length: width }, (_, j) => {
    const shares = rows.filter((r) => (r.values?.[0]?.count ?? 0) > 0 && r.values![j] !== undefined).map((r) => r.values![j].count / r.values![0].count)
    return shares.length ? Math.round((shares.reduce((a, b) => a + b, 0) / shares.length) * 1000) / 10 : 0
  })
}

const cohortName = (r: RetentionRow) => (r.date ? r.date.slice(0, 10) : (r.label ?? ''))

/** PostHog's cohort grid (cohort, size, then % per period shaded like a heatmap) and the mean retention curve. */
export function RetentionResult({ rows, small }: { rows: RetentionRow[]; small?: boolean }) {
  const width = Math.max(0, ...rows.map((r) => r.values?.length ?? 0))
  const headers = Array.from({ length: width }, (_, j) => rows.find((r) => r.values?.[j]?.label)?.values?.[j]?.label ?? `Period ${j}`)
  const mean = meanRetention(rows)
  const option = {
    tooltip: { trigger: 'axis', valueFormatter: (v: number) => `${v}%` },
    grid: { left: 48, right: 16, top: 16, bottom: 32 },
    xAxis: { type: 'category', data: headers },
    yAxis: { type: 'value', min: 0, max: 100, axisLabel: { formatter: '{value}%' } },
    series: [{ name: 'Mean retention', type: 'line', data: mean, showSymbol: true }],
  }
  return (
    <>
      <Chart option={option} label="Retention curve" small={small} />
      {!small && (
        <div className="table-wrap" tabIndex={0}>
          <table className="retention" aria-label="Retention">
            <thead><tr><th>Cohort</th><th className="num">Size</th>{headers.map((h) => <th key={h} className="num">{h}</th>)}</tr></thead>
            <tbody>
              <tr className="mean"><th scope="row">Mean</th><td className="num" />{mean.map((m, j) => <td key={j} className="num">{`${m.toFixed(1)}%`}</td>)}</tr>
              {rows.map((r, i) => {
                const size = r.values?.[0]?.count ?? 0
                return (
                  <tr key={i}>
                    <th scope="row">{cohortName(r)}</th>
                    <td className="num">{size.toLocaleString('en-US')}</td>
                    {headers.map((_, j) => {
                      const v = r.values?.[j]
                      if (!v) return <td key={j} />
                      const share = size ? v.count / size : 0
                      return <td key={j} className="num" style={heat(share)} title={`${v.count} of ${size}`}>{`${Math.round(share * 100)}%`}</td>
                    })}
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  )
}
