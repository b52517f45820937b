import { Empty } from '../ui.tsx'
import { TABS } from './breakdowns.ts'
import { readStatsTable } from './stats-rows.ts'
import { StatsTableView } from './stats-table.tsx'

/** A saved WebStatsTableQuery (a dashboard tile, e.g. the template's landing pages) as the web page's table. */
export function WebStatsTile({ breakdownBy, response }: { breakdownBy: string; response: { results?: unknown; columns?: unknown } }) {
  const tab = [...TABS.values()].find((t) => t.breakdownBy === breakdownBy)
  if (!tab) return <Empty>Tally's web page has no {breakdownBy} table.</Empty>
  return <StatsTableView tab={tab} table={readStatsTable(response)} />
}
