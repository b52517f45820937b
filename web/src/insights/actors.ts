/**
 * The persons behind a number of an insight: PostHog's `ActorsQuery` over a `FunnelsActorsQuery` or
 * an `InsightActorsQuery` (schema-general.ts shapes), which its app asks when a chart is clicked.
 * The server's answer has no exported wire type, so it is typed here.
 */

type Json = Record<string, unknown>

/** Where a click on a chart landed: a series and a category (a bar or a point). */
export interface ChartPick { seriesIndex: number; dataIndex: number; /** Sankey charts: a link (`edge`) or a node. */ dataType?: 'node' | 'edge' }

/** A click's question: the actors query's `source`, and how the list of persons is titled. */
export interface ActorsPick {
  title: string
  source: Json
  /** The number clicked, when it is a count of persons (funnel steps). */
  count?: number
}

/** The person as `ActorsQuery` returns it (the persons API's shape); only `id` when the person is gone. */
export interface ActorJson {
  id: string
  distinct_ids?: string[]
  properties?: Record<string, unknown>
  name?: string
  created_at?: string
  is_identified?: boolean
}

/** One page of an `ActorsQuery`: a row per actor, its cells in `columns` order. */
export interface ActorsPage {
  columns: string[]
  results: unknown[][]
  hasMore: boolean
  limit: number
  offset: number
  missing_actors_count?: number
}

/** One series of a trends, stickiness or lifecycle result, as far as a click needs it. */
export interface ClickedSeries {
  label?: string
  days?: (string | number)[]
  labels?: string[]
  action?: { order?: number } | null
  breakdown_value?: unknown
  compare_label?: string
  status?: string
}

/**
 * The actors source behind point `dataIndex` of series `seriesIndex` (PostHog's
 * `InsightActorsQuery`): its interval `day` (for stickiness, the number of intervals), the series'
 * index in the query, its breakdown value, the previous period when compared, a lifecycle status.
 */
export function insightActorsPick<S extends ClickedSeries>(query: Json, results: S[], name: (s: S) => string, at: ChartPick): ActorsPick | null {
  const s = results[at.seriesIndex]
  if (!s) return null
  // A previous period's series is asked for at the current period's interval, with `compare: 'previous'`.
  const previous = s.compare_label === 'previous'
  const days = (previous ? results.find((r) => r.compare_label !== 'previous') ?? s : s).days ?? []
  const day = days[at.dataIndex]
  if (day === undefined) return null
  const when = s.labels?.[at.dataIndex] ?? String(day)
  const source: Json = { kind: 'InsightActorsQuery', source: query, day }
  if (query.kind === 'LifecycleQuery') return { title: `${s.status ?? 'Persons'} · ${when}`, source: { ...source, status: s.status } }
  source.series = s.action?.order ?? at.seriesIndex
  if (s.breakdown_value !== undefined && s.breakdown_value !== null) source.breakdown = s.breakdown_value
  if (previous) source.compare = 'previous'
  const title = query.kind === 'StickinessQuery' ? `${name(s)} · active on ${when}` : `${name(s)} · ${when}`
  return { title, source }
}

/** A funnel step's persons: those who reached step `step` (1-based), or dropped off right before it. */
export function funnelStepPick(query: Json, stepTitle: string, step: number, opts: { droppedOff: boolean; count: number; breakdownValue?: unknown }): ActorsPick {
  const breakdown = opts.breakdownValue === undefined ? {} : { funnelStepBreakdown: opts.breakdownValue }
  return {
    title: opts.droppedOff ? `Dropped off before ${stepTitle}` : `Reached ${stepTitle}`,
    source: { kind: 'FunnelsActorsQuery', source: query, funnelStep: opts.droppedOff ? -step : step, ...breakdown },
    count: opts.count,
  }
}

/** What a result view needs to open the persons behind its numbers: the query it drew, and the modal's opener. */
export interface PersonsOpener { query: Json; open: (pick: ActorsPick) => void }
