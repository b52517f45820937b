import { useLocation, useSearch } from 'wouter'
import { PageHeader } from '../ui.tsx'
import { BREAKDOWN_GROUPS } from '../web-analytics/breakdowns.ts'
import { FilterBar } from '../web-analytics/filter-bar.tsx'
import { OverviewTiles } from '../web-analytics/overview-tiles.tsx'
import { RecentSessions } from '../web-analytics/recent-sessions.tsx'
import { StatsTableCard } from '../web-analytics/stats-table.tsx'
import { TrendChart } from '../web-analytics/trend-chart.tsx'
import { readState, toggleFilter, writeState, type WebState } from '../web-analytics/web-filters.ts'

/**
 * Web analytics, as PostHog's page: overview tiles with the previous period, the visitors trend, and
 * breakdown tables whose rows filter the page. The state lives in the address bar.
 */
export default function WebAnalyticsPage() {
  const search = useSearch()
  const [, navigate] = useLocation()
  const state = readState(search)
  const set = (s: WebState) => navigate(`~/web${writeState(s)}`)
  return (
    <>
      <PageHeader title="Web analytics" description="Visitors, page views and sessions from the $pageview events posthog-js sends." />
      <FilterBar state={state} onChange={set} />
      <OverviewTiles state={state} />
      <TrendChart state={state} />
      {/* With a goal a table has five columns: one card per row, so values keep their width. */}
      <div className={state.goal ? 'web-grid with-goal' : 'web-grid'}>
        {BREAKDOWN_GROUPS.map((g) => <StatsTableCard key={g.title} group={g} state={state} onFilter={(f) => set(toggleFilter(state, f))} />)}
      </div>
      <RecentSessions state={state} />
    </>
  )
}
