import { useState } from 'react'
import { useSession } from '../session.tsx'
import { useQueryResult } from '../insights/run-query.ts'
import { Chart } from '../insights/chart.tsx'
import { num } from '../insights/format.ts'
import { Card, Empty, Loadable } from '../ui.tsx'
import { GOAL_TABS, goalTrendQuery, type GoalTab } from './goal-trends.ts'
import { goalValue, intervalOf, trendQuery, type WebGoal, type WebState } from './web-filters.ts'

interface Series { label?: string; custom_name?: string; action?: { custom_name?: string } | null; labels?: string[]; days?: string[]; data?: number[]; count?: number }

const total = (s: Series | undefined) => s?.count ?? (s?.data ?? []).reduce((a, b) => a + b, 0)
const nameOf = (s: Series, i: number) => s.action?.custom_name ?? s.custom_name ?? (i === 0 ? 'Visitors' : 'Views')
const hasData = (series: Series[]) => series.some((s) => s.data?.some((v) => v > 0))

/** One line chart of the series, by interval. */
function lineOption(series: Series[], names: (s: Series, i: number) => string, percent = false) {
  return {
    tooltip: { trigger: 'axis', ...(percent ? { valueFormatter: (v: number) => `${(v * 100).toFixed(1)}%` } : {}) },
    legend: { bottom: 0 },
    grid: { left: 48, right: 16, top: 16, bottom: 48 },
    xAxis: { type: 'category', data: series[0]?.labels ?? series[0]?.days ?? [] },
    yAxis: percent ? { type: 'value', axisLabel: { formatter: (v: number) => `${Math.round(v * 100)}%` } } : { type: 'value', minInterval: 1 },
    series: series.map((s, i) => ({ name: names(s, i), type: 'line', data: s.data ?? [], showSymbol: false, areaStyle: i === 0 ? { opacity: 0.08 } : undefined })),
  }
}

/** A note when session filters are on: the trend (a TrendsQuery) cannot apply them. */
function SessionFilterNote({ state }: { state: WebState }) {
  const session = state.filters.filter((f) => f.type === 'session')
  if (session.length === 0) return null
  return <p className="hint" role="note">Session filters ({session.map((f) => f.key).join(', ')}) apply to the tiles and tables, not to this chart.</p>
}

/** Unique visitors and page views per hour or day, from a TrendsQuery of `$pageview`; with a goal, its conversions. */
export function TrendChart({ state }: { state: WebState }) {
  // A new goal starts on its unique conversions, as PostHog's setConversionGoal does.
  if (state.goal) return <GoalTrendChart key={goalValue(state.goal)} state={state} goal={state.goal} />
  return <VisitorTrendChart state={state} />
}

function VisitorTrendChart({ state }: { state: WebState }) {
  const { base } = useSession()
  const result = useQueryResult(base, trendQuery(state))
  return (
    <Card title="Visitors and views">
      <Loadable query={result}>
        {(data) => {
          const series = (data.results as Series[] | undefined) ?? []
          if (!hasData(series)) return <Empty>No page views in this range.</Empty>
          return (
            <>
              <Chart option={lineOption(series, nameOf)} label="Visitors and views over time" />
              <SessionFilterNote state={state} />
              {/* Only views add up over the range: a sum of daily visitors would count returning people again. */}
              <p className="muted" data-testid="trend-views-total">Page views in the range: <strong>{num(total(series[1]))}</strong></p>
            </>
          )
        }}
      </Loadable>
    </Card>
  )
}

/**
 * What a goal tab's line adds up to: total conversions sum over the range; unique counts and rates
 * do not (a person converting on two days is one), so those show their highest point.
 */
function goalSummary(tab: GoalTab, series: Series, interval: string): string {
  const data = series.data ?? []
  if (tab.id === 'total_conversions') return `Conversions in the range: ${num(total(series))}`
  const highest = data.length ? Math.max(...data) : 0
  return `Highest in one ${interval}: ${tab.percent ? `${(highest * 100).toFixed(1)}%` : num(highest)}`
}

function GoalTrendChart({ state, goal }: { state: WebState; goal: WebGoal }) {
  const { base } = useSession()
  const [tab, setTab] = useState<GoalTab>(GOAL_TABS[0]!)
  const result = useQueryResult(base, goalTrendQuery(state, goal, tab.id))
  return (
    <Card title="Conversions">
      <div className="tabs" role="tablist" aria-label="Trend">
        {GOAL_TABS.map((t) => (
          <button key={t.id} type="button" role="tab" id={`web-trend-${t.id}`} aria-selected={t.id === tab.id} aria-controls="web-trend-panel" onClick={() => setTab(t)}>{t.label}</button>
        ))}
      </div>
      <div role="tabpanel" id="web-trend-panel" aria-labelledby={`web-trend-${tab.id}`}>
        <Loadable query={result}>
          {(data) => {
            const series = (data.results as Series[] | undefined) ?? []
            if (!hasData(series)) return <Empty>No {tab.label.toLowerCase()} in this range.</Empty>
            return (
              <>
                <Chart option={lineOption(series, () => tab.label, tab.percent)} label={`${tab.label} over time`} />
                <SessionFilterNote state={state} />
                <p className="muted" data-testid="trend-goal-summary">{goalSummary(tab, series[0]!, intervalOf(state.dateFrom))}</p>
              </>
            )
          }}
        </Loadable>
      </div>
    </Card>
  )
}
