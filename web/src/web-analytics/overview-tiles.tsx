import { useSession } from '../session.tsx'
import { useQueryResult } from '../insights/run-query.ts'
import { humanDuration, num } from '../insights/format.ts'
import { Loadable } from '../ui.tsx'
import { overviewQuery, type WebState } from './web-filters.ts'

/** PostHog's WebOverviewItem. */
interface OverviewItem { key: string; value?: number | null; previous?: number | null; kind: 'unit' | 'duration_s' | 'percentage' | 'currency'; changeFromPreviousPct?: number | null; isIncreaseBad?: boolean | null }

/** The tiles' titles for PostHog's item keys (others show their key). */
const TITLES: Record<string, string> = {
  visitors: 'Visitors', views: 'Page views', sessions: 'Sessions', 'session duration': 'Session duration', 'bounce rate': 'Bounce rate',
  'total conversions': 'Total conversions', 'unique conversions': 'Unique conversions', 'conversion rate': 'Conversion rate',
}

/** A value as its kind reads: counts, durations ("3m 20s"), percentages (already ×100, as PostHog sends them). */
export function formatItem(kind: OverviewItem['kind'], v: number | null | undefined): string {
  if (v === null || v === undefined) return '—'
  if (kind === 'duration_s') return humanDuration(v)
  if (kind === 'percentage') return `${Number.isInteger(v) ? v : v.toFixed(1)}%`
  return num(Math.round(v * 100) / 100)
}

/** The change against the previous period: PostHog's `changeFromPreviousPct`, worked out when absent. */
function change(item: OverviewItem): number | null {
  if (typeof item.changeFromPreviousPct === 'number') return item.changeFromPreviousPct
  if (item.value == null || item.previous == null || item.previous === 0) return null
  return Math.round(((item.value - item.previous) / item.previous) * 100)
}

function Tile({ item, compare }: { item: OverviewItem; compare: boolean }) {
  const title = TITLES[item.key] ?? item.key
  const pct = compare ? change(item) : null
  const good = pct === null || pct === 0 ? 'neutral' : (pct > 0) !== !!item.isIncreaseBad ? 'up' : 'down'
  return (
    <div className="web-tile" role="group" aria-label={title}>
      <div className="web-tile-title">{title}</div>
      <div className="stat" data-testid={`web-tile-${item.key.replace(/\s+/g, '-')}`}>{formatItem(item.kind, item.value)}</div>
      {compare && (
        <div className={`web-change ${good}`}>
          {pct !== null && `${pct > 0 ? '▲' : pct < 0 ? '▼' : ''} ${Math.abs(pct)}% · `}
          <span className="muted">{item.previous == null ? 'no previous data' : `was ${formatItem(item.kind, item.previous)}`}</span>
        </div>
      )}
    </div>
  )
}

/** Visitors, views, sessions, session duration and bounce rate (or, with a goal, its conversions), with the previous period. */
export function OverviewTiles({ state }: { state: WebState }) {
  const { base } = useSession()
  const result = useQueryResult(base, overviewQuery(state))
  return (
    <section aria-label="Overview" className="web-tiles">
      <Loadable query={result}>
        {(data) => ((data.results as OverviewItem[] | undefined) ?? []).map((item) => <Tile key={item.key} item={item} compare={state.compare} />)}
      </Loadable>
    </section>
  )
}
