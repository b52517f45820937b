import { formatWall, toWallTime } from '../query/zoned-time.ts'
import type { WebOrderField, WebStatsTableQuery } from './web-query.ts'

/** A number of the store (bigints past 2^53 come as text) as JavaScript's, NaN and absent as null. */
export function num(v: unknown): number | null {
  if (v === null || v === undefined) return null
  const n = typeof v === 'number' ? v : Number(v)
  return Number.isNaN(n) ? null : n
}

/** Python's `round`: halves to the even neighbour (PostHog computes changeFromPreviousPct with it). */
export function roundHalfEven(x: number): number {
  const r = Math.round(x)
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r
}

export type WebItemKind = 'unit' | 'duration_s' | 'percentage' | 'currency'

/** One overview tile, PostHog's `to_data` (web_overview.py): percentages ×100, the change rounded. */
export function overviewItem(key: string, kind: WebItemKind, value: number | null, previous: number | null, isIncreaseBad: boolean | null = null) {
  if (kind === 'percentage') {
    value = value === null ? null : value * 100
    previous = previous === null ? null : previous * 100
  }
  const changeFromPreviousPct = value !== null && previous !== null && previous !== 0 ? roundHalfEven((100 * (value - previous)) / previous) : null
  return { key, kind, isIncreaseBad, value, previous, changeFromPreviousPct }
}

/** The five tiles from the overview row (`previous_*` NULL without compare). */
export function overviewResults(row: Record<string, unknown>) {
  return [
    overviewItem('visitors', 'unit', num(row.visitors), num(row.previous_visitors)),
    overviewItem('views', 'unit', num(row.views), num(row.previous_views)),
    overviewItem('sessions', 'unit', num(row.sessions), num(row.previous_sessions)),
    overviewItem('session duration', 'duration_s', num(row.duration), num(row.previous_duration)),
    overviewItem('bounce rate', 'percentage', num(row.bounce_rate), num(row.previous_bounce_rate), true),
  ]
}

/** Unique conversions over visitors (ClickHouse's divide: 0/0 is NaN, shown as null). */
const rateOf = (conversions: number | null, visitors: number | null) => (conversions === null || visitors === null || visitors === 0 ? null : conversions / visitors)

/** The four tiles of the conversion-goal overview (PostHog's keys), from `overviewPlan`'s row with a goal. */
export function conversionOverviewResults(row: Record<string, unknown>) {
  const [visitors, previousVisitors] = [num(row.visitors), num(row.previous_visitors)]
  const [unique, previousUnique] = [num(row.unique_conversions), num(row.previous_unique_conversions)]
  return [
    overviewItem('visitors', 'unit', visitors, previousVisitors),
    overviewItem('total conversions', 'unit', num(row.conversions), num(row.previous_conversions)),
    overviewItem('unique conversions', 'unit', unique, previousUnique),
    overviewItem('conversion rate', 'percentage', rateOf(unique, visitors), rateOf(previousUnique, previousVisitors)),
  ]
}

/** PostHog's `QueryDateRange.date_from_str`/`date_to_str`: local `YYYY-MM-DD HH:MM:SS` (the end's last second). */
export function rangeStrings(range: { from: Date; to: Date; timeZone: string }) {
  return {
    dateFrom: formatWall(toWallTime(range.from, range.timeZone), true),
    dateTo: formatWall(toWallTime(new Date(range.to.getTime() - 1000), range.timeZone), true),
  }
}

/** One row of the stats table before it is ordered and paged. */
export interface StatsRow {
  value: unknown
  visitors: [number, number | null]
  views: [number, number | null]
  bounceRate?: [number | null, number | null]
  /** Language: the most common region (`en` → `en-US`). */
  aggregationValue?: string
}

export const STATS_COLUMNS = {
  value: 'context.columns.breakdown_value',
  visitors: 'context.columns.visitors',
  views: 'context.columns.views',
  bounceRate: 'context.columns.bounce_rate',
  fill: 'context.columns.ui_fill_fraction',
  crossSell: 'context.columns.cross_sell',
} as const

type Sortable = number | string | null
function compareValues(a: unknown, b: unknown): number {
  const la = Array.isArray(a) ? a : [a]
  const lb = Array.isArray(b) ? b : [b]
  for (let i = 0; i < Math.max(la.length, lb.length); i++) {
    const c = compareScalar(la[i] as Sortable, lb[i] as Sortable)
    if (c !== 0) return c
  }
  return 0
}
/** ClickHouse's order: NULLs last, numbers by value, text by bytes. */
function compareScalar(a: Sortable | undefined, b: Sortable | undefined): number {
  if (a === b) return 0
  if (a === null || a === undefined) return 1
  if (b === null || b === undefined) return -1
  if (typeof a === 'number' && typeof b === 'number') return a - b
  return Buffer.compare(Buffer.from(String(a)), Buffer.from(String(b)))
}

const FIELD_OF: Record<WebOrderField, 'visitors' | 'views' | 'bounceRate'> = { Visitors: 'visitors', Views: 'views', BounceRate: 'bounceRate' }

/**
 * PostHog's order (stats_table.py `_order_by`): the requested column first, then visitors, then
 * views, in the requested direction (descending by default), each a (current, previous) tuple;
 * last the breakdown value ascending.
 */
export function sortStatsRows(rows: StatsRow[], orderBy: WebStatsTableQuery['orderBy']): StatsRow[] {
  const sign = orderBy?.direction === 'ASC' ? 1 : -1
  const first = orderBy ? FIELD_OF[orderBy.field] : null
  const columns = [...(first && (first !== 'bounceRate' || rows.some((r) => r.bounceRate)) ? [first] : []), ...(['visitors', 'views'] as const).filter((c) => c !== first)]
  return [...rows].sort((a, b) => {
    for (const c of columns) {
      const x = compareValues(a[c] ?? null, b[c] ?? null)
      if (x !== 0) return sign * x
    }
    return compareValues(a.value, b.value)
  })
}

/**
 * The table's response fields: PostHog's columns and rows (`[value, [visitors, previous],
 * [views, previous], [bounce rate, previous]?, fill fraction, cross-sell]`), a page of them, `hasMore`.
 * The fill fraction is the row's share of the visitors of all rows (or its bounce rate when
 * ordered by it), as the page draws its bars.
 */
export function shapeStatsTable(all: StatsRow[], q: WebStatsTableQuery, withBounce: boolean) {
  const sorted = sortStatsRows(all, q.orderBy)
  const total = sorted.reduce((s, r) => s + (r.visitors[0] ?? 0), 0)
  const byBounce = q.orderBy?.field === 'BounceRate' && withBounce
  const page = sorted.slice(q.offset, q.offset + q.limit)
  const columns = [STATS_COLUMNS.value, STATS_COLUMNS.visitors, STATS_COLUMNS.views, ...(withBounce ? [STATS_COLUMNS.bounceRate] : []), STATS_COLUMNS.fill, STATS_COLUMNS.crossSell]
  const language = q.breakdownBy === 'Language'
  const results = page.map((r) => {
    const value = language ? `${String(r.value)}-${r.aggregationValue ?? ''}` : r.value
    if (language) return [value, r.visitors, r.views, '']
    const fill = byBounce ? (r.bounceRate?.[0] ?? null) : total === 0 ? null : r.visitors[0] / total
    return [value, r.visitors, r.views, ...(withBounce ? [r.bounceRate ?? [null, null]] : []), fill, '']
  })
  const types = columns.map((c) => [c, c === STATS_COLUMNS.value ? 'Nullable(String)' : c === STATS_COLUMNS.fill ? 'Float64' : c === STATS_COLUMNS.crossSell ? 'String' : 'Tuple(UInt64, UInt64)'])
  return { columns, results, types, hasMore: sorted.length > q.offset + q.limit, limit: q.limit, offset: q.offset }
}
