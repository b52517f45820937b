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

/** A (current, previous) pair; previous is null without compare. */
export type Pair = [number | null, number | null]

/** One row of the stats table before it is ordered and paged. */
export interface StatsRow {
  value: unknown
  visitors: [number, number | null]
  views?: [number, number | null]
  bounceRate?: Pair
  /** With a conversion goal: the goal's events, the visitors who had one, and their share of the visitors. */
  totalConversions?: Pair
  uniqueConversions?: Pair
  conversionRate?: Pair
  /** Language: the most common region (`en` → `en-US`). */
  aggregationValue?: string
}

export const STATS_COLUMNS = {
  value: 'context.columns.breakdown_value',
  visitors: 'context.columns.visitors',
  views: 'context.columns.views',
  bounceRate: 'context.columns.bounce_rate',
  totalConversions: 'context.columns.total_conversions',
  uniqueConversions: 'context.columns.unique_conversions',
  conversionRate: 'context.columns.conversion_rate',
  fill: 'context.columns.ui_fill_fraction',
  crossSell: 'context.columns.cross_sell',
} as const

/** The measured columns of a row, in PostHog's column order. */
type Measure = 'visitors' | 'views' | 'bounceRate' | 'totalConversions' | 'uniqueConversions' | 'conversionRate'

/** The measures a table has: with a goal, PostHog's conversion columns replace views and bounce rate. */
export function statsMeasures(opts: { bounce: boolean; goal: boolean }): Measure[] {
  if (opts.goal) return ['visitors', 'totalConversions', 'uniqueConversions', 'conversionRate']
  return ['visitors', 'views', ...(opts.bounce ? (['bounceRate'] as const) : [])]
}

/** Unique conversions over visitors per period, null for no visitors (stats_table.py's `context.columns.conversion_rate`). */
export function conversionRatePair(unique: Pair, visitors: [number, number | null]): Pair {
  return [rateOf(unique[0], visitors[0]), rateOf(unique[1], visitors[1])]
}

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

const FIELD_OF: Record<WebOrderField, Measure> = {
  Visitors: 'visitors',
  Views: 'views',
  BounceRate: 'bounceRate',
  TotalConversions: 'totalConversions',
  UniqueConversions: 'uniqueConversions',
  ConversionRate: 'conversionRate',
}

/**
 * PostHog's order (stats_table.py `_order_by`): the requested column when the table has it, then
 * unique conversions, total conversions, visitors and views (those it has), each a (current,
 * previous) tuple in the requested direction (descending by default); last the breakdown value ascending.
 */
export function statsOrder(measures: Measure[], orderBy: WebStatsTableQuery['orderBy']): Measure[] {
  const first = orderBy && measures.includes(FIELD_OF[orderBy.field]) ? FIELD_OF[orderBy.field] : null
  const rest = (['uniqueConversions', 'totalConversions', 'visitors', 'views'] as const).filter((c) => c !== first && measures.includes(c))
  return [...(first ? [first] : []), ...rest]
}

export function sortStatsRows(rows: StatsRow[], order: Measure[], direction: 'ASC' | 'DESC' = 'DESC'): StatsRow[] {
  const sign = direction === 'ASC' ? 1 : -1
  return [...rows].sort((a, b) => {
    for (const c of order) {
      const x = compareValues(a[c] ?? null, b[c] ?? null)
      if (x !== 0) return sign * x
    }
    return compareValues(a.value, b.value)
  })
}

/**
 * stats_table.py's `_fill_fraction`, from the first order column: a count's share of that column's
 * total over all rows, a rate as it is (0/0 is NaN in ClickHouse: null here).
 */
function fillFraction(rows: StatsRow[], column: Measure): (r: StatsRow) => number | null {
  if (column === 'bounceRate' || column === 'conversionRate') return (r) => r[column]?.[0] ?? null
  const total = rows.reduce((s, r) => s + (r[column]?.[0] ?? 0), 0)
  return (r) => (total === 0 ? null : (r[column]?.[0] ?? 0) / total)
}

const TYPE_OF: Record<Measure, string> = {
  visitors: 'Tuple(UInt64, UInt64)',
  views: 'Tuple(UInt64, UInt64)',
  bounceRate: 'Tuple(UInt64, UInt64)',
  totalConversions: 'Tuple(UInt64, UInt64)',
  uniqueConversions: 'Tuple(UInt64, UInt64)',
  conversionRate: 'Tuple(Nullable(Float64), Nullable(Float64))',
}

/**
 * The table's response fields: PostHog's columns and rows (`[value, …measures as [current, previous],
 * fill fraction, cross-sell]`; the measures are visitors, views and bounce rate, or with a goal
 * visitors, total and unique conversions and the conversion rate), a page of them, `hasMore`.
 */
export function shapeStatsTable(all: StatsRow[], q: WebStatsTableQuery, measures: Measure[]) {
  const order = statsOrder(measures, q.orderBy)
  const sorted = sortStatsRows(all, order, q.orderBy?.direction)
  const fill = fillFraction(sorted, order[0] ?? 'visitors')
  const page = sorted.slice(q.offset, q.offset + q.limit)
  const language = q.breakdownBy === 'Language'
  const columns = [STATS_COLUMNS.value, ...measures.map((m) => STATS_COLUMNS[m]), STATS_COLUMNS.fill, STATS_COLUMNS.crossSell]
  const results = page.map((r) => {
    const value = language ? `${String(r.value)}-${r.aggregationValue ?? ''}` : r.value
    // PostHog keeps a language row's first three fields and the cross-sell (without a goal: with one,
    // its first three would cut the conversion columns, and its value would carry a tuple).
    if (language && !r.totalConversions) return [value, r.visitors, r.views ?? [null, null], '']
    return [value, ...measures.map((m) => r[m] ?? [null, null]), fill(r), '']
  })
  const types = columns.map((c) => [c, c === STATS_COLUMNS.value ? 'Nullable(String)' : c === STATS_COLUMNS.fill ? 'Float64' : c === STATS_COLUMNS.crossSell ? 'String' : TYPE_OF[measureOf(c)]])
  return { columns, results, types, hasMore: sorted.length > q.offset + q.limit, limit: q.limit, offset: q.offset }
}

const measureOf = (column: string): Measure => (Object.keys(STATS_COLUMNS) as Array<keyof typeof STATS_COLUMNS>).find((k) => STATS_COLUMNS[k] === column) as Measure
