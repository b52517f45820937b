/**
 * Reads a WebStatsTableQuery answer. PostHog names its columns `context.columns.<name>`
 * (breakdown_value, visitors, views, bounce_rate, or with a conversion goal total_conversions,
 * unique_conversions, conversion_rate; ui_fill_fraction), and with compare on each metric cell is a
 * `[current, previous]` pair; both forms are read here, so the table shows what the server sent.
 */
export interface Metric { current: number | null; previous: number | null }
export interface StatsRow {
  value: unknown
  visitors: Metric
  views: Metric
  bounceRate: Metric | null
  /** With a conversion goal (the table then has no views and no bounce rate). */
  goal: { total: Metric; unique: Metric; rate: Metric } | null
  /** The server's `ui_fill_fraction` (the row's share by its order column), null when not sent. */
  fill: number | null
}
export interface StatsTable { rows: StatsRow[]; hasBounceRate: boolean; hasGoal: boolean }

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
  // Without named columns: PostHog's order (value, visitors, views, bounce rate).
  const index = (name: string, fallback: number) => {
    const i = columnIndex(columns, name)
    return i >= 0 ? i : columns.length === 0 ? fallback : -1
  }
  const at = {
    value: index('breakdown_value', 0), visitors: index('visitors', 1), views: index('views', 2), bounce: index('bounce_rate', 3),
    total: index('total_conversions', -1), unique: index('unique_conversions', -1), rate: index('conversion_rate', -1), fill: index('ui_fill_fraction', -1),
  }
  const cell = (r: unknown[], i: number) => (i >= 0 ? r[i] : null)
  const hasGoal = at.total >= 0 && at.unique >= 0
  return {
    hasBounceRate: at.bounce >= 0 && rows.some((r) => r[at.bounce] !== undefined),
    hasGoal,
    rows: rows.map((r) => ({
      value: cell(r, at.value),
      visitors: metric(cell(r, at.visitors)),
      views: metric(cell(r, at.views)),
      bounceRate: at.bounce >= 0 && r[at.bounce] !== undefined ? metric(r[at.bounce]) : null,
      goal: hasGoal ? { total: metric(r[at.total]), unique: metric(r[at.unique]), rate: metric(cell(r, at.rate)) } : null,
      fill: toNumber(cell(r, at.fill)),
    })),
  }
}
