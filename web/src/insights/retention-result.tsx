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

const HOUR = 3_600_000
const PERIOD_MS: Record<string, number> = { Hour: HOUR, Day: 24 * HOUR, Week: 7 * 24 * HOUR }

/** The period unit of a result ("Day" of "Day 3"), from its value or row labels. */
const unitOf = (rows: RetentionRow[]) => (rows.find((r) => r.values?.[0]?.label)?.values?.[0]?.label ?? rows[0]?.label ?? 'Day').split(' ')[0]

/**
 * Whether period `k` of a cohort has begun by `now`: the server sends every period of every row,
 * the ones still to come as zeros, which PostHog's grid leaves blank.
 */
export function hasBegun(row: RetentionRow, k: number, unit: string, now: number): boolean {
  if (!row.date) return true
  const start = new Date(row.date)
  if (unit === 'Month') start.setUTCMonth(start.getUTCMonth() + k)
  else start.setTime(start.getTime() + k * (PERIOD_MS[unit] ?? PERIOD_MS.Day))
  return start.getTime() <= now
}

/**
 * Mean retention (%) per period: the simple mean over the cohorts that are not empty and whose
 * period has begun (PostHog's default "simple" mean); null where no cohort has reached it.
 */
export function meanRetention(rows: RetentionRow[], now: number): (number | null)[] {
  const width = Math.max(0, ...rows.map((r) => r.values?.length ?? 0))
  const unit = unitOf(rows)
  return Array.from({ length: width }, (_, j) => {
    const shares = rows
      .filter((r) => (r.values?.[0]?.count ?? 0) > 0 && r.values![j] !== undefined && hasBegun(r, j, unit, now))
      .map((r) => r.values![j].count / r.values![0].count)
    return shares.length ? Math.round((shares.reduce((a, b) => a + b, 0) / shares.length) * 1000) / 10 : null
  })
}

const cohortName = (r: RetentionRow, unit: string) => (!r.date ? (r.label ?? '') : unit === 'Hour' ? r.date.slice(0, 16).replace('T', ' ') : r.date.slice(0, 10))

/** PostHog's cohort grid (cohort, size, then % per period shaded like a heatmap) and the mean retention curve. */
export function RetentionResult({ rows, small }: { rows: RetentionRow[]; small?: boolean }) {
  const width = Math.max(0, ...rows.map((r) => r.values?.length ?? 0))
  const headers = Array.from({ length: width }, (_, j) => rows.find((r) => r.values?.[j]?.label)?.values?.[j]?.label ?? `Period ${j}`)
  const now = Date.now()
  const unit = unitOf(rows)
  const mean = meanRetention(rows, now)
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
              <tr className="mean"><th scope="row">Mean</th><td className="num" />{mean.map((m, j) => <td key={j} className="num">{m == null ? '' : `${m.toFixed(1)}%`}</td>)}</tr>
              {rows.map((r, i) => {
                const size = r.values?.[0]?.count ?? 0
                return (
                  <tr key={i}>
                    <th scope="row">{cohortName(r, unit)}</th>
                    <td className="num">{size.toLocaleString('en-US')}</td>
                    {headers.map((_, j) => {
                      const v = r.values?.[j]
                      if (!v || !hasBegun(r, j, unit, now)) return <td key={j} />
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
