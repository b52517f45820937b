import { bin, col, fromPlan, keep, lit, notNull, timeBetween, when, type Expr, type Plan, type SelectItem } from '../query/query-plan.ts'
import { channelSource, channelTypeExpr, sourceKindExpr } from './channel-type.ts'

/**
 * Sessions as PostHog's sessions table (v2) defines them, computed from the events by set-based
 * SQL at query time: one row per `$session_id` (posthog-js's session id), whatever order its events
 * arrived in or however many micro-batches they spanned, since every statement reads them all.
 *
 * PostHog's raw_sessions aggregate (posthog/models/raw_sessions/sessions_v2.py and
 * posthog/hogql/database/schema/sessions_v2.py): start/end are the first and last event of any kind;
 * entry/end URL the `$current_url` of the first/last event ('' for an event without one, shown as
 * NULL); the first event's referrer, UTMs and ad click ids; counts of `$pageview`, `$autocapture`
 * and `$screen`; the duration in whole seconds between start and end (ClickHouse's dateDiff).
 * Bounce (default `bounceRatePageViewMode`, count_pageviews): NULL without page views, else not a
 * bounce when there is more than one page view, any autocapture, or a duration of 10 s or more.
 */

/** PostHog's `DEFAULT_BOUNCE_RATE_DURATION_SECONDS`. */
export const BOUNCE_DURATION_SECONDS = 10

/**
 * posthog-js ends a session after 24 hours at most: every event of a session that starts in a
 * period lies within a day after the period's end, and a session with events in the period starts
 * at most a day before it.
 */
export const SESSION_SPAN_MS = 24 * 3_600_000

/** The session id of an event: its `$session_id` property ('' counts as none). */
export const sessionIdExpr: Expr = { op: 'property', source: 'event', key: '$session_id' }
export const hasSessionId: Expr = { op: 'and', args: [notNull(sessionIdExpr), bin('!=', sessionIdExpr, lit(''))] }

const prop = (key: string): Expr => ({ op: 'property', source: 'event', key })
const tsMs: Expr = { op: 'epoch_ms', arg: col('timestamp') }
/** The property's text at the session's first (or last) event, '' when that event has none. */
const first = (key: string): Expr => ({ op: 'aggregate', fn: 'arg_min', arg: { op: 'coalesce', args: [prop(key), lit('')] }, by: tsMs })
const last = (key: string): Expr => ({ op: 'aggregate', fn: 'arg_max', arg: { op: 'coalesce', args: [prop(key), lit('')] }, by: tsMs })
const countOf = (event: string): Expr => ({ op: 'aggregate', fn: 'count', arg: when(bin('=', col('event'), lit(event)), lit(1)) })
const nullIfEmpty = (name: string): Expr => when(bin('=', col(`raw_${name}`), lit('')), lit(null), col(`raw_${name}`))
/** The path of a URL (ClickHouse's `path`: after the host, before `?` or `#`), NULL when empty. */
export const urlPath = (url: Expr): Expr => ({ op: 'regex_extract', arg: url, pattern: '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)' })

/** Entry properties kept per session, by PostHog's session field name (`$entry_<name>`) and the event property read. */
const ENTRY: ReadonlyArray<readonly [column: string, property: string]> = [
  ['entry_current_url', '$current_url'],
  ['entry_referring_domain', '$referring_domain'],
  ['entry_referrer', '$referrer'],
  ['entry_utm_source', 'utm_source'],
  ['entry_utm_medium', 'utm_medium'],
  ['entry_utm_campaign', 'utm_campaign'],
  ['entry_utm_term', 'utm_term'],
  ['entry_utm_content', 'utm_content'],
  ['entry_gclid', 'gclid'],
  ['entry_fbclid', 'fbclid'],
  ['entry_gad_source', 'gad_source'],
]
const END: ReadonlyArray<readonly [column: string, property: string]> = [
  ['end_current_url', '$current_url'],
  ['last_external_click_url', '$external_click_url'],
]

/** Columns of `sessionsPlan`'s rows (with `channel_type` when asked). */
export const SESSION_COLUMNS = [
  'session_id', 'start_ms', 'end_ms', 'session_duration', 'is_bounce', 'pageview_count', 'autocapture_count', 'screen_count',
  ...ENTRY.map(([c]) => c), ...END.map(([c]) => c), 'entry_pathname', 'end_pathname',
] as const

/**
 * One row per session with events in `[from, to)` (the caller widens its periods by
 * `SESSION_SPAN_MS` on both sides so that every session it reads is whole). `channel` adds
 * `channel_type` (PostHog's `$channel_type`; a large constant lookup, so only when read).
 */
export function sessionsPlan(read: { from: Date; to: Date }, opts: { channel?: boolean } = {}): Plan {
  const perSession: Plan = {
    source: { kind: 'events' },
    select: [
      { alias: 'session_id', expr: sessionIdExpr },
      { alias: 'start_ms', expr: { op: 'aggregate', fn: 'min', arg: tsMs } },
      { alias: 'end_ms', expr: { op: 'aggregate', fn: 'max', arg: tsMs } },
      // Raw names apart from the final ones: ClickHouse reads `f(x) AS x` as a cyclic alias.
      ...ENTRY.map(([c, p]) => ({ alias: `raw_${c}`, expr: first(p) })),
      ...END.map(([c, p]) => ({ alias: `raw_${c}`, expr: last(p) })),
      { alias: 'pageview_count', expr: countOf('$pageview') },
      { alias: 'autocapture_count', expr: countOf('$autocapture') },
      { alias: 'screen_count', expr: countOf('$screen') },
    ],
    where: { op: 'and', args: [hasSessionId, timeBetween(read.from, read.to)] },
    groupBy: [sessionIdExpr],
  }
  const seconds = (c: string): Expr => ({ op: 'floor', arg: bin('/', col(c), lit(1000)) })
  const duration = bin('-', seconds('end_ms'), seconds('start_ms'))
  const isBounce: Expr = {
    op: 'case',
    when: [
      [bin('=', col('pageview_count'), lit(0)), lit(null)],
      [{ op: 'or', args: [bin('>', col('pageview_count'), lit(1)), bin('>', col('autocapture_count'), lit(0)), bin('>=', duration, lit(BOUNCE_DURATION_SECONDS))] }, lit(0)],
    ],
    else: lit(1),
  }
  const named: SelectItem[] = [
    ...keep(['session_id', 'start_ms', 'end_ms', 'pageview_count', 'autocapture_count', 'screen_count']),
    { alias: 'session_duration', expr: duration },
    { alias: 'is_bounce', expr: isBounce },
    ...[...ENTRY, ...END].map(([c]) => ({ alias: c, expr: nullIfEmpty(c) })),
  ]
  const sessions: Plan = { source: fromPlan(perSession), select: named }
  const withPaths: Plan = {
    source: fromPlan(sessions),
    select: [
      ...keep(SESSION_COLUMNS.filter((c) => c !== 'entry_pathname' && c !== 'end_pathname')),
      { alias: 'entry_pathname', expr: urlPath(col('entry_current_url')) },
      { alias: 'end_pathname', expr: urlPath(col('end_current_url')) },
      ...(opts.channel
        ? [
            { alias: 'utm_source_lower', expr: channelSource(col('entry_utm_source')) },
            { alias: 'ref_kind', expr: sourceKindExpr(col('entry_referring_domain')) },
          ]
        : []),
    ],
  }
  if (!opts.channel) return withPaths
  // The source kinds are computed once per session (the lookup table is large), then the rules read them.
  const kinds: Plan = {
    source: fromPlan(withPaths),
    select: [...keep([...SESSION_COLUMNS, 'utm_source_lower', 'ref_kind']), { alias: 'source_kind', expr: sourceKindExpr(col('utm_source_lower')) }],
  }
  return {
    source: fromPlan(kinds),
    select: [
      ...keep(SESSION_COLUMNS),
      {
        alias: 'channel_type',
        expr: channelTypeExpr({
          source: col('utm_source_lower'),
          sourceKind: col('source_kind'),
          referringDomainKind: col('ref_kind'),
          medium: col('entry_utm_medium'),
          campaign: col('entry_utm_campaign'),
          referringDomain: col('entry_referring_domain'),
          gclid: col('entry_gclid'),
          fbclid: col('entry_fbclid'),
          gadSource: col('entry_gad_source'),
        }),
      },
    ],
  }
}
