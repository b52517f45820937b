/**
 * The insight builder's state and the PostHog query it stands for (schema-general.ts shapes:
 * TrendsQuery, FunnelsQuery, RetentionQuery, LifecycleQuery, StickinessQuery, PathsQuery, HogQLQuery).
 */
export type Kind = 'TrendsQuery' | 'FunnelsQuery' | 'RetentionQuery' | 'LifecycleQuery' | 'StickinessQuery' | 'PathsQuery' | 'HogQLQuery'
export type Display = 'ActionsLineGraph' | 'ActionsBar' | 'BoldNumber' | 'ActionsTable'

/** One series: an event by name, or a saved action by id (`actionId` set). */
export interface Series { event: string; math: string; actionId?: number; actionName?: string }

export interface Builder {
  kind: Kind
  series: Series[]
  interval: 'hour' | 'day' | 'week' | 'month'
  dateFrom: string
  breakdown: string
  display: Display
  compare: boolean
  propKey: string
  propValue: string
  funnelWindow: number
  funnelWindowUnit: FunnelWindowUnit
  funnelOrder: 'ordered' | 'strict' | 'unordered'
  funnelViz: FunnelViz
  /** Steps time to convert and conversion trends measure between (0-based; `funnelToStep` null: the last). */
  funnelFromStep: number
  funnelToStep: number | null
  exclusions: Exclusion[]
  retentionReturning: string
  retentionPeriod: 'Day' | 'Week' | 'Month'
  retentionType: 'retention_first_time' | 'retention_recurring'
  retentionIntervals: number
  sql: string
  /** Paths: PostHog's `pathsFilter` (event types, start and end point, step limit, cleaning rules). */
  pathTypes: PathType[]
  pathStart: string
  pathEnd: string
  pathSteps: number
  pathCleaning: CleaningRule[]
  /** The most links shown (PostHog's `edgeLimit`; null: its default, 50), the least and most times a link is taken (null: no bound). */
  pathEdgeLimit: number | null
  pathMinWeight: number | null
  pathMaxWeight: number | null
}

/** PostHog's default `edgeLimit`, shown in its empty box. */
export const DEFAULT_EDGE_LIMIT = 50

export type PathType = '$pageview' | '$screen' | 'custom_event'
/** A path cleaning rule: every match of `regex` in an item becomes `alias`. */
export interface CleaningRule { regex: string; alias: string }

export type FunnelViz = 'steps' | 'time_to_convert' | 'trends'
export type FunnelWindowUnit = 'minute' | 'hour' | 'day' | 'week' | 'month'
/** An event that takes a person out of the funnel between two steps (0-based). */
export interface Exclusion { event: string; from: number; to: number }

export const KINDS: [Kind, string][] = [
  ['TrendsQuery', 'Trends'], ['FunnelsQuery', 'Funnels'], ['RetentionQuery', 'Retention'],
  ['LifecycleQuery', 'Lifecycle'], ['StickinessQuery', 'Stickiness'], ['PathsQuery', 'Paths'], ['HogQLQuery', 'SQL'],
]

export const DEFAULT_BUILDER: Builder = {
  kind: 'TrendsQuery',
  series: [{ event: '$pageview', math: 'total' }],
  interval: 'day',
  dateFrom: '-7d',
  breakdown: '',
  display: 'ActionsLineGraph',
  compare: false,
  propKey: '',
  propValue: '',
  funnelWindow: 14,
  funnelWindowUnit: 'day',
  funnelOrder: 'ordered',
  funnelViz: 'steps',
  funnelFromStep: 0,
  funnelToStep: null,
  exclusions: [],
  retentionReturning: '',
  retentionPeriod: 'Day',
  retentionType: 'retention_first_time',
  retentionIntervals: 8,
  sql: 'SELECT event, count() AS events\nFROM events\nGROUP BY event\nORDER BY events DESC\nLIMIT 20',
  pathTypes: ['$pageview'],
  pathStart: '',
  pathEnd: '',
  pathSteps: 5,
  pathCleaning: [],
  pathEdgeLimit: null,
  pathMinWeight: null,
  pathMaxWeight: null,
}

type Json = Record<string, unknown>

const eventNode = (s: Series) => s.actionId !== undefined
  ? { kind: 'ActionsNode', id: s.actionId, name: s.actionName ?? `Action ${s.actionId}`, math: s.math }
  : { kind: 'EventsNode', event: s.event || null, name: s.event || 'All events', math: s.math }

/** The query the builder describes; `dateFrom` overrides the date range (a dashboard's filter). */
export function toQuery(b: Builder, dateFrom?: string): Json {
  if (b.kind === 'HogQLQuery') return { kind: 'HogQLQuery', query: b.sql }
  const dateRange = { date_from: dateFrom || b.dateFrom }
  const properties = b.propKey ? [{ key: b.propKey, value: b.propValue, operator: b.propValue ? 'exact' : 'is_set', type: 'event' }] : []
  const common = { dateRange, properties, filterTestAccounts: false }
  switch (b.kind) {
    case 'TrendsQuery':
      return {
        kind: 'TrendsQuery', ...common, series: b.series.map(eventNode), interval: b.interval,
        trendsFilter: { display: b.display },
        ...(b.breakdown ? { breakdownFilter: { breakdown: b.breakdown, breakdown_type: 'event' } } : {}),
        ...(b.compare ? { compareFilter: { compare: true } } : {}),
      }
    case 'FunnelsQuery':
      return toFunnelsQuery(b, common)
    case 'RetentionQuery': {
      const first = b.series[0]?.event || '$pageview'
      return {
        kind: 'RetentionQuery', ...common,
        retentionFilter: {
          targetEntity: { id: first, name: first, type: 'events' },
          returningEntity: { id: b.retentionReturning || first, name: b.retentionReturning || first, type: 'events' },
          period: b.retentionPeriod, totalIntervals: b.retentionIntervals, retentionType: b.retentionType,
        },
      }
    }
    case 'LifecycleQuery':
      return { kind: 'LifecycleQuery', ...common, series: b.series.slice(0, 1).map(eventNode), interval: b.interval }
    case 'StickinessQuery':
      return { kind: 'StickinessQuery', ...common, series: b.series.map(eventNode), interval: b.interval }
    case 'PathsQuery': {
      const cleaning = b.pathCleaning.filter((r) => r.regex)
      return {
        kind: 'PathsQuery', ...common,
        pathsFilter: {
          includeEventTypes: b.pathTypes, stepLimit: b.pathSteps,
          ...(b.pathStart ? { startPoint: b.pathStart } : {}), ...(b.pathEnd ? { endPoint: b.pathEnd } : {}),
          ...(cleaning.length ? { localPathCleaningFilters: cleaning } : {}),
          ...(b.pathEdgeLimit !== null ? { edgeLimit: b.pathEdgeLimit } : {}),
          ...(b.pathMinWeight !== null ? { minEdgeWeight: b.pathMinWeight } : {}),
          ...(b.pathMaxWeight !== null ? { maxEdgeWeight: b.pathMaxWeight } : {}),
        },
      }
    }
  }
}

/**
 * PostHog's `FunnelsQuery`: exclusions only between existing steps, and from/to steps only for the
 * time-to-convert and trends views; a breakdown only for steps (the server answers the rest with a 400).
 */
function toFunnelsQuery(b: Builder, common: Json): Json {
  const last = Math.max(0, b.series.length - 1)
  // PostHog applies exclusions to sequential and strict funnels only.
  const exclusions = b.funnelOrder === 'unordered' ? [] : b.exclusions.filter((x) => x.event && x.from < x.to && x.to <= last)
    .map((x) => ({ kind: 'EventsNode', event: x.event, name: x.event, funnelFromStep: x.from, funnelToStep: x.to }))
  const between = b.funnelViz === 'steps' ? {} : { funnelFromStep: Math.min(b.funnelFromStep, Math.max(0, last - 1)), funnelToStep: Math.min(b.funnelToStep ?? last, last) }
  return {
    kind: 'FunnelsQuery', ...common, series: b.series.map(eventNode), interval: b.interval,
    funnelsFilter: {
      funnelWindowInterval: b.funnelWindow, funnelWindowIntervalUnit: b.funnelWindowUnit, funnelOrderType: b.funnelOrder, funnelVizType: b.funnelViz,
      ...(exclusions.length ? { exclusions } : {}), ...between,
    },
    ...(b.breakdown && b.funnelViz === 'steps' ? { breakdownFilter: { breakdown: b.breakdown, breakdown_type: 'event' } } : {}),
  }
}

/** What the wrapper of a saved insight holds (PostHog stores `InsightVizNode` / `DataVisualizationNode`). */
export function sourceOf(saved: unknown): Json | null {
  if (!saved || typeof saved !== 'object') return null
  const q = saved as Json
  if ((q.kind === 'InsightVizNode' || q.kind === 'DataVisualizationNode' || q.kind === 'DataTableNode') && q.source) return q.source as Json
  return q
}

/** The saved wrapper for a query. */
export function wrap(query: Json): Json {
  return query.kind === 'HogQLQuery' ? { kind: 'DataVisualizationNode', source: query } : { kind: 'InsightVizNode', source: query }
}

/** The builder state back from a stored query (fields the builder does not know keep their defaults). */
export function fromQuery(raw: unknown): Builder {
  const q = sourceOf(raw)
  if (!q || !KINDS.some(([k]) => k === q.kind)) return DEFAULT_BUILDER
  const b: Builder = { ...DEFAULT_BUILDER, kind: q.kind as Kind }
  if (q.kind === 'HogQLQuery') return { ...b, sql: String(q.query ?? '') }
  const series = (q.series as Json[] | undefined) ?? []
  if (series.length) {
    b.series = series.map((s) => s.kind === 'ActionsNode'
      ? { event: '', math: String(s.math ?? 'total'), actionId: Number(s.id), actionName: String(s.name ?? '') }
      : { event: String(s.event ?? ''), math: String(s.math ?? 'total') })
  }
  if (typeof q.interval === 'string') b.interval = q.interval as Builder['interval']
  const dr = q.dateRange as Json | undefined
  if (typeof dr?.date_from === 'string') b.dateFrom = dr.date_from
  const bd = q.breakdownFilter as Json | undefined
  if (typeof bd?.breakdown === 'string') b.breakdown = bd.breakdown
  const tf = q.trendsFilter as Json | undefined
  if (typeof tf?.display === 'string' && ['ActionsLineGraph', 'ActionsBar', 'BoldNumber', 'ActionsTable'].includes(tf.display)) b.display = tf.display as Display
  b.compare = Boolean((q.compareFilter as Json | undefined)?.compare)
  const props = (q.properties as Json[] | undefined) ?? []
  if (props[0]) { b.propKey = String(props[0].key ?? ''); b.propValue = props[0].operator === 'is_set' ? '' : String(props[0].value ?? '') }
  const pf = q.pathsFilter as Json | undefined
  if (pf) readPathsFilter(b, pf)
  const ff = q.funnelsFilter as Json | undefined
  if (ff) readFunnelsFilter(b, ff)
  const rf = q.retentionFilter as Json | undefined
  if (rf) {
    const target = rf.targetEntity as Json | undefined
    const returning = rf.returningEntity as Json | undefined
    b.series = [{ event: String(target?.id ?? '$pageview'), math: 'total' }]
    b.retentionReturning = String(returning?.id ?? '')
    b.retentionPeriod = (rf.period as Builder['retentionPeriod']) ?? 'Day'
    if (rf.retentionType === 'retention_recurring') b.retentionType = 'retention_recurring'
    if (typeof rf.totalIntervals === 'number') b.retentionIntervals = rf.totalIntervals
  }
  return b
}

const oneOf = <T extends string>(v: unknown, choices: readonly T[], fallback: T): T => (choices.includes(v as T) ? (v as T) : fallback)

function readFunnelsFilter(b: Builder, ff: Json): void {
  b.funnelWindow = Number(ff.funnelWindowInterval ?? 14)
  b.funnelWindowUnit = oneOf(ff.funnelWindowIntervalUnit, ['minute', 'hour', 'day', 'week', 'month'], 'day')
  b.funnelOrder = oneOf(ff.funnelOrderType, ['ordered', 'strict', 'unordered'], 'ordered')
  b.funnelViz = oneOf(ff.funnelVizType, ['steps', 'time_to_convert', 'trends'], 'steps')
  if (typeof ff.funnelFromStep === 'number') b.funnelFromStep = ff.funnelFromStep
  if (typeof ff.funnelToStep === 'number') b.funnelToStep = ff.funnelToStep
  b.exclusions = ((ff.exclusions as Json[] | undefined) ?? []).map((x) => ({ event: String(x.event ?? ''), from: Number(x.funnelFromStep ?? 0), to: Number(x.funnelToStep ?? 1) }))
}

function readPathsFilter(b: Builder, pf: Json): void {
  const types = Array.isArray(pf.includeEventTypes) ? pf.includeEventTypes.filter((t): t is PathType => t === '$pageview' || t === '$screen' || t === 'custom_event') : []
  b.pathTypes = types
  b.pathStart = typeof pf.startPoint === 'string' ? pf.startPoint : ''
  b.pathEnd = typeof pf.endPoint === 'string' ? pf.endPoint : ''
  if (typeof pf.stepLimit === 'number') b.pathSteps = pf.stepLimit
  b.pathCleaning = ((pf.localPathCleaningFilters as Json[] | undefined) ?? []).map((r) => ({ regex: String(r.regex ?? ''), alias: String(r.alias ?? '') }))
  // As PostHog reads them: 0 or none is the default limit, and no bound.
  const whole = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null)
  b.pathEdgeLimit = whole(pf.edgeLimit)
  b.pathMinWeight = whole(pf.minEdgeWeight)
  b.pathMaxWeight = whole(pf.maxEdgeWeight)
}
