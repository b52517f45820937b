import { useState } from 'react'
import { useSession } from '../session.tsx'
import { useQueryResult } from '../insights/run-query.ts'
import { num } from '../insights/format.ts'
import { Card, Empty, Loadable } from '../ui.tsx'
import { breakdownLabel, rowFilter, type BreakdownGroup, type BreakdownTab } from './breakdowns.ts'
import { readStatsTable, type Metric, type StatsRow, type StatsTable } from './stats-rows.ts'
import { CountryMap } from './country-map.tsx'
import { statsTableQuery, type WebFilter, type WebState } from './web-filters.ts'

/** A share (0..1) as PostHog's table shows it: "42.9%". */
const share = (v: number | null) => (v === null ? '—' : `${(v * 100).toFixed(1)}%`)

/** A number with its previous period's value as a title, when compare gave one. */
function Cell({ m, format }: { m: Metric; format: (v: number | null) => string }) {
  return <td className="num" title={m.previous !== null ? `Previous period: ${format(m.previous)}` : undefined}>{format(m.current)}</td>
}

const NONE: Metric = { current: null, previous: null }

/**
 * The metric columns as PostHog's table shows them: visitors, views and bounce rate; with a
 * conversion goal, visitors, total conversions, unique conversions and the conversion rate.
 */
function metricColumns(table: StatsTable): Array<{ title: string; of: (r: StatsRow) => Metric; format: (v: number | null) => string }> {
  if (table.hasGoal) {
    return [
      { title: 'Visitors', of: (r) => r.visitors, format: num },
      { title: 'Total conversions', of: (r) => r.goal?.total ?? NONE, format: num },
      { title: 'Unique conversions', of: (r) => r.goal?.unique ?? NONE, format: num },
      { title: 'Conversion rate', of: (r) => r.goal?.rate ?? NONE, format: share },
    ]
  }
  return [
    { title: 'Visitors', of: (r) => r.visitors, format: num },
    { title: 'Views', of: (r) => r.views, format: num },
    ...(table.hasBounceRate ? [{ title: 'Bounce rate', of: (r: StatsRow) => r.bounceRate ?? NONE, format: share }] : []),
  ]
}

/** The rows of one breakdown; a click on a value filters the whole page by it. */
export function StatsTableView({ tab, table, onFilter }: { tab: BreakdownTab; table: StatsTable; onFilter?: (f: WebFilter) => void }) {
  if (table.rows.length === 0) return <Empty>No {tab.label.toLowerCase()} in this range.</Empty>
  const total = table.rows.reduce((sum, r) => sum + (r.visitors.current ?? 0), 0)
  return (
    <div className="table-wrap" tabIndex={0}>
      <table aria-label={tab.label} className="web-table">
        <thead>
          <tr>
            <th>{tab.column}</th>
            {metricColumns(table).map((c) => <th key={c.title} className="num">{c.title}</th>)}
          </tr>
        </thead>
        <tbody>
          {table.rows.map((r, i) => {
            const filter = onFilter ? rowFilter(tab, r.value) : null
            const what = filter?.operator === 'is_not_set' ? 'no' : ''
            const label = breakdownLabel(r.value)
            // The server's fill fraction (its order column's share: visitors, or a goal's unique conversions).
            const fill = r.fill ?? (total > 0 ? (r.visitors.current ?? 0) / total : 0)
            const width = `${Math.round(Math.min(1, Math.max(0, fill)) * 100)}%`
            return (
              <tr key={i} className={filter ? 'clickable' : undefined} onClick={filter ? () => onFilter!(filter) : undefined}>
                <td className="web-value" style={{ ['--share' as string]: width }}>
                  {filter
                    ? <button type="button" className="link" title={`Filter by ${what ? `${what} ${tab.column.toLowerCase()}` : `${tab.column.toLowerCase()} ${label}`}`} onClick={(e) => { e.stopPropagation(); onFilter!(filter) }}>{label}</button>
                    : <span>{label}</span>}
                </td>
                {metricColumns(table).map((c) => <Cell key={c.title} m={c.of(r)} format={c.format} />)}
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

/** One card of tabs (Paths, Sources, Devices…), each tab its own WebStatsTableQuery. */
/** The tabs that show GeoIP locations (docs/geoip.md). */
const LOCATION_TABS = new Set(['country', 'region', 'city'])

export function StatsTableCard({ group, state, onFilter }: { group: BreakdownGroup; state: WebState; onFilter: (f: WebFilter) => void }) {
  const { base } = useSession()
  const [tabId, setTabId] = useState(group.tabs[0]!.id)
  const tab = group.tabs.find((t) => t.id === tabId) ?? group.tabs[0]!
  const result = useQueryResult(base, statsTableQuery(state, tab.breakdownBy))
  const panelId = `web-${group.tabs[0]!.id}-panel`
  return (
    <Card title={group.title}>
      <div className="tabs" role="tablist" aria-label={group.title}>
        {group.tabs.map((t) => (
          <button key={t.id} type="button" role="tab" id={`web-tab-${t.id}`} aria-selected={t.id === tab.id} aria-controls={panelId} onClick={() => setTabId(t.id)}>{t.label}</button>
        ))}
      </div>
      <div role="tabpanel" id={panelId} aria-labelledby={`web-tab-${tab.id}`}>
        <Loadable query={result}>
          {(data) => {
            const table = readStatsTable(data)
            return (
              <>
                {tab.id === 'country' && table.rows.length > 0 && <CountryMap table={table} tab={tab} onFilter={onFilter} />}
                <StatsTableView tab={tab} table={table} onFilter={onFilter} />
                {LOCATION_TABS.has(tab.id) && (
                  // DB-IP's licence (CC BY 4.0) asks for this link where its locations are shown.
                  <p className="muted"><a href="https://db-ip.com" target="_blank" rel="noreferrer">IP Geolocation by DB-IP</a></p>
                )}
              </>
            )
          }}
        </Loadable>
      </div>
    </Card>
  )
}
