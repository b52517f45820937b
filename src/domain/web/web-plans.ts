import { and, bin, col, keep, lit, timeBetween, when, type Expr, type Plan, type SelectItem } from '../query/query-plan.ts'
import { keepCondition, languagePrefix, languageRegion, type BreakdownDef } from './web-breakdowns.ts'
import { hasSessionId, SESSION_SPAN_MS, sessionIdExpr, sessionsPlan } from './sessions-plan.ts'

/** The query's session filters (`session-filters.ts`), on `sessionsPlan`'s columns. */
export interface SessionFilter {
  expr: Expr | undefined
}
const NO_SESSION_FILTER: SessionFilter = { expr: undefined }

/** A half-open span of time. */
export interface Span {
  from: Date
  to: Date
}

/** The query's period and, with compare, the one before it. */
export interface Periods {
  current: Span
  previous: Span | null
}

const all = (p: Periods): Span[] => (p.previous ? [p.current, p.previous] : [p.current])
const or = (args: Expr[]): Expr => (args.length === 1 ? args[0]! : { op: 'or', args })

/** An instant in milliseconds (a column) inside the span. */
function msIn(ms: Expr, s: Span): Expr {
  return and(bin('>=', ms, lit(s.from.getTime())), bin('<', ms, lit(s.to.getTime())))!
}

/** Sessions that started in a period (`start_ms` of the joined sessions). */
const startedInPeriods = (p: Periods): Expr => or(all(p).map((s) => msIn(col('start_ms'), s)))

/** Events of the periods: PostHog's `_periods_expression('timestamp')`. */
function eventsInPeriods(p: Periods): Expr {
  return or(all(p).map((s) => timeBetween(s.from, s.to)))
}

/**
 * The sessions the periods can read, whole (from a session span before the first period to one
 * after the last), with the session columns the given expressions read.
 */
function sessionsFor(p: Periods, reads: Array<Expr | undefined>): Plan {
  const spans = all(p)
  const from = Math.min(...spans.map((s) => s.from.getTime())) - SESSION_SPAN_MS
  const to = Math.max(...spans.map((s) => s.to.getTime())) + SESSION_SPAN_MS
  return sessionsPlan({ from: new Date(from), to: new Date(to) }, columnsRead(reads))
}

/** The column names an expression reads. */
function columnsRead(exprs: Array<Expr | undefined>): Set<string> {
  const names = new Set<string>()
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === 'object') {
      const o = v as { op?: unknown; name?: unknown }
      if (o.op === 'column' && typeof o.name === 'string') names.add(o.name)
      else Object.values(o).forEach(walk)
    }
  }
  walk(exprs)
  return names
}

/** Page views and screens (PostHog's `event_type_expr` without conversion goals). */
const isView: Expr = { op: 'in', arg: col('event'), values: ['$pageview', '$screen'] }
/** The visitor: the event's person (after merges), or its distinct id for an event without one. */
const visitor: Expr = { op: 'coalesce', args: [{ op: 'to_text', arg: { op: 'person_id' } }, col('distinct_id')] }

/** `agg(value)` over the rows of a period (sessions that started in it), NULL for none (PostHog's `…If` aggregates). */
function inPeriod(fn: 'uniq' | 'sum' | 'avg', value: Expr, s: Span | null): Expr {
  if (!s) return lit(null)
  const expr: Expr = { op: 'aggregate', fn, arg: when(msIn(col('start_ms'), s), value) }
  // Counts and sums of no rows are 0 (ClickHouse's uniqExact of only NULLs is NULL), as signed whole
  // numbers (`floor` casts to Int64: ClickHouse has no common type of UInt64 and Int64).
  return fn === 'avg' ? expr : { op: 'coalesce', args: [{ op: 'floor', arg: expr }, lit(0)] }
}

/**
 * Per session (and breakdown value): the goal's events and the visitor who had one (PostHog's
 * `conversion_count_expr`, `countIf(goal)`, and `conversion_person_id_expr`, `any(if(goal, person_id, NULL))`).
 */
function conversionCounts(goal: Expr): SelectItem[] {
  return [
    { alias: 'conversion_count', expr: { op: 'aggregate', fn: 'count', arg: when(goal, lit(1)) } },
    { alias: 'conversion_person', expr: { op: 'aggregate', fn: 'any', arg: when(goal, visitor) } },
  ]
}

/** Per period: the goal's events (`conversions`) and the visitors who had one (`unique_conversions`). */
function conversionMeasures(s: Span | null, prefix: string): SelectItem[] {
  return [
    { alias: `${prefix}conversions`, expr: inPeriod('sum', col('conversion_count'), s) },
    { alias: `${prefix}unique_conversions`, expr: inPeriod('uniq', col('conversion_person'), s) },
  ]
}

// Output aliases never repeat a column name of their source: ClickHouse would read `sum(views) AS views`
// as an aggregate inside an aggregate.

/**
 * `WebOverviewQuery` (posthog/hogql_queries/web_analytics/web_overview.py): the page views and
 * screens of the periods (filtered), per session; sessions kept when they started in a period; then
 * per period: unique visitors, views, sessions, the average session duration and the bounce rate
 * (duration and bounce of the whole session, from the sessions table).
 *
 * With a conversion `goal` (the events the goal matches: an action, or a custom event's name), the
 * goal's events count beside the views, and per period: unique visitors, the goal's events
 * (`conversions`) and the visitors who had one in a session that started in the period
 * (`unique_conversions`); the rate is theirs over the visitors (`conversionOverviewResults`).
 */
export function overviewPlan(p: Periods, filter: Expr | undefined, session: SessionFilter = NO_SESSION_FILTER, goal?: Expr): Plan {
  const counted = goal ? conversionCounts(goal) : [{ alias: 'view_count', expr: { op: 'aggregate', fn: 'count' } } satisfies SelectItem]
  const perSession: Plan = {
    source: { kind: 'events' },
    select: [
      { alias: 'session_id', expr: sessionIdExpr },
      { alias: 'person', expr: { op: 'aggregate', fn: 'any', arg: visitor } },
      ...counted,
    ],
    where: and(goal ? or([isView, goal]) : isView, hasSessionId, eventsInPeriods(p), filter),
    groupBy: [sessionIdExpr],
  }
  const measures = (s: Span | null, prefix: string): SelectItem[] => [
    { alias: `${prefix}visitors`, expr: inPeriod('uniq', col('person'), s) },
    ...(goal
      ? conversionMeasures(s, prefix)
      : [
          { alias: `${prefix}views`, expr: inPeriod('sum', col('view_count'), s) },
          { alias: `${prefix}sessions`, expr: inPeriod('uniq', col('session_id'), s) },
          { alias: `${prefix}duration`, expr: inPeriod('avg', col('session_duration'), s) },
          { alias: `${prefix}bounce_rate`, expr: inPeriod('avg', col('is_bounce'), s) },
        ]),
  ]
  return {
    source: { kind: 'join', left: perSession, right: sessionsFor(p, [session.expr]), using: ['session_id'] },
    select: [...measures(p.current, ''), ...measures(p.previous, 'previous_')],
    where: and(startedInPeriods(p), session.expr),
  }
}

/** The breakdown's part columns `bv0`… as selected from the events or from the joined sessions. */
const partAlias = (i: number) => `bv${i}`

/**
 * `WebStatsTableQuery`'s rows (stats_table.py's main query): per session and breakdown value, the
 * session's views of the periods (filtered) and its visitor; per value and period: unique visitors,
 * views and (with `bounce`) the bounce rate of those sessions. Unordered and unlimited: the caller
 * sorts, computes each row's share and pages.
 *
 * With a conversion `goal` (stats_table.py's `to_main_query` with `conversionGoal`): the goal's events
 * are read beside the views, each under its own breakdown value, and per value and period come the
 * unique visitors, the goal's events (`conversions`) and the visitors who had one
 * (`unique_conversions`), without views or bounce rate.
 */
export function statsPlan(p: Periods, def: BreakdownDef, filter: Expr | undefined, opts: { bounce: boolean; session?: SessionFilter; goal?: Expr }): Plan {
  const { goal } = opts
  const session = opts.session ?? NO_SESSION_FILTER
  const counted: SelectItem[] = goal ? conversionCounts(goal) : [{ alias: 'view_count', expr: { op: 'aggregate', fn: 'count' } }]
  const countColumns = goal ? ['conversion_count', 'conversion_person'] : ['view_count']
  const eventParts = def.parts.flatMap((part, i) => (part.from === 'event' ? [{ alias: partAlias(i), expr: part.expr }] : []))
  const perSession: Plan = {
    source: { kind: 'events' },
    select: [
      { alias: 'session_id', expr: sessionIdExpr },
      ...eventParts,
      { alias: 'person', expr: { op: 'aggregate', fn: 'any', arg: visitor } },
      ...counted,
    ],
    where: and(goal ? or([isView, goal]) : isView, hasSessionId, eventsInPeriods(p), filter),
    groupBy: [sessionIdExpr, ...eventParts.map((e) => e.expr)],
  }
  const joined: Plan = {
    source: { kind: 'join', left: perSession, right: sessionsFor(p, [session.expr, ...def.parts.filter((part) => part.from === 'session').map((part) => part.expr)]), using: ['session_id'] },
    select: [
      ...keep(['session_id', 'person', ...countColumns, 'start_ms', 'is_bounce']),
      ...def.parts.map((part, i) => ({ alias: partAlias(i), expr: part.from === 'event' ? col(partAlias(i)) : part.expr })),
    ],
    where: and(startedInPeriods(p), session.expr),
  }
  const kept = keepCondition(def)
  const rows: Plan = kept ? { source: { kind: 'plan', plan: joined }, select: keep(['session_id', 'person', ...countColumns, 'start_ms', 'is_bounce', ...def.parts.map((_, i) => partAlias(i))]), where: kept } : joined
  const values: SelectItem[] = def.language
    ? [{ alias: 'language', expr: languagePrefix(col('bv0')) }, { alias: 'aggregation_value', expr: { op: 'aggregate', fn: 'mode', arg: languageRegion(col('bv0')) } }]
    : def.parts.map((_, i) => ({ alias: partAlias(i), expr: col(partAlias(i)) }))
  const groupBy = def.language ? [languagePrefix(col('bv0'))] : def.parts.map((_, i) => col(partAlias(i)))
  return {
    source: { kind: 'plan', plan: rows },
    select: [
      ...values,
      { alias: 'visitors', expr: inPeriod('uniq', col('person'), p.current) },
      { alias: 'previous_visitors', expr: inPeriod('uniq', col('person'), p.previous) },
      ...(goal ? [...conversionMeasures(p.current, ''), ...conversionMeasures(p.previous, 'previous_')] : viewMeasures(p, opts.bounce)),
    ],
    groupBy,
  }
}

/** The table's views and (with `bounce`) bounce rate per period. */
function viewMeasures(p: Periods, bounce: boolean): SelectItem[] {
  return [
    { alias: 'views', expr: inPeriod('sum', col('view_count'), p.current) },
    { alias: 'previous_views', expr: inPeriod('sum', col('view_count'), p.previous) },
    ...(bounce
      ? [{ alias: 'bounce_rate', expr: inPeriod('avg', col('is_bounce'), p.current) }, { alias: 'previous_bounce_rate', expr: inPeriod('avg', col('is_bounce'), p.previous) }]
      : []),
  ]
}

/**
 * The Page table's bounce rate (stats_table.py's PATH_BOUNCE_QUERY): for each page, the bounce rate
 * of the sessions that entered on it, over the page views of the periods with the filters other than
 * `$pathname` (so a filter on pages keeps each page's own entry bounce rate). Rows `bv0` (the entry
 * pathname), `bounce_rate`, `previous_bounce_rate`.
 */
export function entryBouncePlan(p: Periods, filterWithoutPathname: Expr | undefined, session: SessionFilter = NO_SESSION_FILTER): Plan {
  const perSession: Plan = {
    source: { kind: 'events' },
    select: [{ alias: 'session_id', expr: sessionIdExpr }],
    where: and(isView, hasSessionId, eventsInPeriods(p), filterWithoutPathname),
    groupBy: [sessionIdExpr],
  }
  return {
    source: { kind: 'join', left: perSession, right: sessionsFor(p, [session.expr, col('entry_pathname')]), using: ['session_id'] },
    select: [
      { alias: 'bv0', expr: col('entry_pathname') },
      { alias: 'bounce_rate', expr: inPeriod('avg', col('is_bounce'), p.current) },
      { alias: 'previous_bounce_rate', expr: inPeriod('avg', col('is_bounce'), p.previous) },
    ],
    where: and(startedInPeriods(p), session.expr, { op: 'not', arg: { op: 'is_null', arg: col('entry_pathname') } }),
    groupBy: [col('entry_pathname')],
  }
}
