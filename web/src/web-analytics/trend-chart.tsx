import { useSession } from '../session.tsx'
import { useQueryResult } from '../insights/run-query.ts'
import { Chart } from '../insights/chart.tsx'
import { num } from '../insights/format.ts'
import { Card, Empty, Loadable } from '../ui.tsx'
import { trendQuery, type WebState } from './web-filters.ts'

interface Series { label?: string; custom_name?: string; action?: { custom_name?: string } | null; labels?: string[]; days?: string[]; data?: number[]; count?: number }

const total = (s: Series | undefined) => s?.count ?? (s?.data ?? []).reduce((a, b) => a + b, 0)
const nameOf = (s: Series, i: number) => s.action?.custom_name ?? s.custom_name ?? (i === 0 ? 'Visitors' : 'Views')

/** Unique visitors and page views per hour or day, from a TrendsQuery of `$pageview`. */
export function TrendChart({ state }: { state: WebState }) {
  const { base } = useSession()
  const result = useQueryResult(base, trendQuery(state))
  return (
    <Card title="Visitors and views">
      <Loadable query={result}>
        {(data) => {
          const series = (data.results as Series[] | undefined) ?? []
          if (series.length === 0 || series.every((s) => !s.data?.some((v) => v > 0))) return <Empty>No page views in this range.</Empty>
          const option = {
            tooltip: { trigger: 'axis' },
            legend: { bottom: 0 },
            grid: { left: 48, right: 16, top: 16, bottom: 48 },
            xAxis: { type: 'category', data: series[0]?.labels ?? series[0]?.days ?? [] },
            yAxis: { type: 'value', minInterval: 1 },
            series: series.map((s, i) => ({ name: nameOf(s, i), type: 'line', data: s.data ?? [], showSymbol: false, areaStyle: i === 0 ? { opacity: 0.08 } : undefined })),
          }
          return (
            <>
              <Chart option={option} label="Visitors and views over time" />
              {/* Only views add up over the range: a sum of daily visitors would count returning people again. */}
              {state.filters.some((f) => f.type === 'session') && (
                <p className="hint" role="note">Session filters ({state.filters.filter((f) => f.type === 'session').map((f) => f.key).join(', ')}) apply to the tiles and tables, not to this chart.</p>
              )}
              <p className="muted" data-testid="trend-views-total">Page views in the range: <strong>{num(total(series[1]))}</strong></p>
            </>
          )
        }}
      </Loadable>
    </Card>
  )
}
