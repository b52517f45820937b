/**
 * Reads a WebStatsTableQuery answer. PostHog names its columns `context.columns.<name>`
 * (breakdown_value, visitors, views, bounce_rate…), and with compare on each metric cell is a
 * `[current, previous]` pair; both forms are read here, so the table shows what the server sent.
 */
export interface Metric { current: number | null; previous: number | null }
export interface StatsRow { value: unknown; visitors: Metric; views: Metric; bounceRate: Metric | null }
export interface StatsTable { rows: StatsRow[]; hasBounceRate: boolean }

const toNumber = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v !== '' && Number.isFinite(Number(v)) ? Number(v) : null)

function metric(cell: unknown): Metric {
  if (Array.isArray(cell)) return { current: toNumber(cell[0]), previous: toNumber(cell[1]) }
  return { current: toNumber(cell), previous: null }
}

/** The index of a column by its short name (`visitors` finds `context.columns.visitors`). */
function columnIndex(columns: string[], name: string): number {
  return columns.findIndex((c) => c === name || c.endsWith(`.${name}`))
}

export function readStatsTable(response: { columns?: unknown; results?: unknown }): StatsTable {
  const columns = Array.isArray(response.columns) ? response.columns.map(String) : []
  const rows = Array.isArray(response.results) ? (response.results as unknown[][]) : []
  const at = { value: columnIndex(columns, 'breakdown_value'), visitors: columnIndex(columns, 'visitors'), views: columnIndex(columns, 'views'), bounce: columnIndex(columns, 'bounce_rate') }
  // Without named columns: PostHog's order (value, visitors, views, bounce rate).
  const index = (i: number, fallback: number) => (i >= 0 ? i : columns.length === 0 ? fallback : -1)
  const value = index(at.value, 0)
  const visitors = index(at.visitors, 1)
  const views = index(at.views, 2)
  const bounce = index(at.bounce, 3)
  return {
    hasBounceRate: bounce >= 0 && rows.some((r) => r[bounce] !== undefined),
    rows: rows.map((r) => ({
      value: value >= 0 ? r[value] : null,
      visitors: metric(visitors >= 0 ? r[visitors] : null),
      views: metric(views >= 0 ? r[views] : null),
      bounceRate: bounce >= 0 && r[bounce] !== undefined ? metric(r[bounce]) : null,
    })),
  }
}
