import { and, bin, col, fromPlan, keep, lit, notNull, when, type Expr, type Plan, type SelectItem } from '../query/query-plan.ts'
import { ENTRY_PROPERTIES } from './session-partials.ts'
import { channelSource, channelTypeExpr, sourceKindExpr } from './channel-type.ts'

/**
 * Sessions as PostHog's sessions table (v2) defines them, merged at query time from the sessions
 * aggregate the event stores keep at ingestion (`session-partials.ts`): one row per `$session_id`
 * (posthog-js's session id), whatever order its events arrived in or however many micro-batches they
 * spanned, since the merge reads every partial of the session.
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

/** A merged text field: '' (the event had none) is NULL, as PostHog's nullIf(…, ''). */
const nonEmpty = (c: string): Expr => when(bin('=', col(c), lit('')), lit(null), col(c))
/** The path of a URL (ClickHouse's `path`: after the host, before `?` or `#`), NULL when empty. */
export const urlPath = (url: Expr): Expr => ({ op: 'regex_extract', arg: url, pattern: '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)' })

/** The host of a URL (ClickHouse's `domain`: after the scheme, before the port, path, `?` or `#`), NULL when empty. */
const urlHost = (url: Expr): Expr => ({ op: 'regex_extract', arg: url, pattern: '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#:]*)' })

/** Entry fields by `sessionsPlan` column (`$entry_<name>` in PostHog) and the partial column merged into it. */
const ENTRY: ReadonlyArray<readonly [column: string, partial: string]> = ENTRY_PROPERTIES.map(([name]) => [`entry_${name}`, `first_${name}`])
const END: ReadonlyArray<readonly [column: string, partial: string]> = [
  ['end_current_url', 'last_current_url'],
  ['last_external_click_url', 'last_external_click_url'],
]
/** Columns derived from the URLs, and the URL column each reads. */
const FROM_URL: ReadonlyArray<readonly [column: string, url: string, of: (url: Expr) => Expr]> = [
  ['entry_pathname', 'entry_current_url', (u) => urlPath(u)],
  ['end_pathname', 'end_current_url', (u) => urlPath(u)],
  ['entry_hostname', 'entry_current_url', urlHost],
  ['end_hostname', 'end_current_url', urlHost],
]

/** The partials whose start lies in `read` (either end open), or all. */
function partialsIn(read: { from?: Date; to?: Date } | undefined): Expr | undefined {
  return and(
    read?.from ? bin('>=', col('min_ms'), lit(read.from.getTime())) : undefined,
    read?.to ? bin('<', col('min_ms'), lit(read.to.getTime())) : undefined,
  )
}

/** Columns of `sessionsPlan`'s rows (with `channel_type` when asked). */
export const SESSION_COLUMNS = [
  'session_id', 'start_ms', 'end_ms', 'session_duration', 'is_bounce', 'pageview_count', 'autocapture_count', 'screen_count',
  ...ENTRY.map(([c]) => c), ...END.map(([c]) => c), ...FROM_URL.map(([c]) => c),
] as const

/** Columns `sessionsPlan` adds only when named in `needs`: the session's last distinct id, its first and last event's time (the engine's timestamp). */
const EXTRA = ['distinct_id', 'start_timestamp', 'end_timestamp'] as const

/**
 * PostHog's session fields (sessions_v2.py's lazy sessions table, the `$…` session properties) by
 * the `sessionsPlan` column that holds them; `$exit_*` and `duration` are PostHog's aliases.
 */
export const SESSION_FIELDS: ReadonlyMap<string, string> = new Map([
  ['session_id', 'session_id'],
  ['id', 'session_id'],
  ['distinct_id', 'distinct_id'],
  ['$start_timestamp', 'start_timestamp'],
  ['$end_timestamp', 'end_timestamp'],
  ['$entry_pathname', 'entry_pathname'],
  ['$end_pathname', 'end_pathname'],
  ['$exit_pathname', 'end_pathname'],
  ['$entry_hostname', 'entry_hostname'],
  ['$end_hostname', 'end_hostname'],
  ['$end_current_url', 'end_current_url'],
  ['$exit_current_url', 'end_current_url'],
  ...ENTRY.map(([c]): [string, string] => [`$${c}`, c]),
  ['$last_external_click_url', 'last_external_click_url'],
  ['$channel_type', 'channel_type'],
  ['$session_duration', 'session_duration'],
  ['duration', 'session_duration'],
  ['$pageview_count', 'pageview_count'],
  ['$autocapture_count', 'autocapture_count'],
  ['$screen_count', 'screen_count'],
  ['$is_bounce', 'is_bounce'],
])

/** What the channel rules read of a session. */
const CHANNEL_INPUTS = ['entry_utm_source', 'entry_utm_medium', 'entry_utm_campaign', 'entry_referring_domain', 'entry_gclid', 'entry_fbclid', 'entry_gad_source']

/**
 * One row per session with events in `[from, to)` (the caller widens its periods by
 * `SESSION_SPAN_MS` on both sides so that every session it reads is whole; either end may be open;
 * every session of the project without `read`): the session id, start,
 * end, duration, counts and bounce, and the other `SESSION_COLUMNS` named in `needs` (as PostHog's
 * lazy sessions table selects only the fields a query reads: each entry property is state kept per
 * session). `channel_type` in `needs` adds PostHog's `$channel_type` (a large constant lookup); `EXTRA`
 * columns are there only when named.
 */
export function sessionsPlan(read: { from?: Date; to?: Date } | undefined, needs: ReadonlySet<string> = new Set()): Plan {
  const channel = needs.has('channel_type')
  const urls = FROM_URL.filter(([c]) => needs.has(c))
  const wanted = new Set([...needs, ...(channel ? CHANNEL_INPUTS : []), ...urls.map(([, url]) => url)])
  const entry = ENTRY.filter(([c]) => wanted.has(c))
  const end = END.filter(([c]) => wanted.has(c))
  const extra = EXTRA.filter((c) => needs.has(c))
  const merged = (c: string) => `m_${c}`
  const extraItem: Record<(typeof EXTRA)[number], Expr> = {
    distinct_id: { op: 'aggregate', fn: 'arg_max', arg: col('last_distinct_id'), by: col('max_ms') },
    start_timestamp: { op: 'time_of_ms', arg: { op: 'aggregate', fn: 'min', arg: col('min_ms') } },
    end_timestamp: { op: 'time_of_ms', arg: { op: 'aggregate', fn: 'max', arg: col('max_ms') } },
  }
  const total = (c: string): Expr => ({ op: 'floor', arg: { op: 'aggregate', fn: 'sum', arg: col(c) } })
  // The session's partials merged (session-partials.ts). A partial's start lies within the session,
  // so the partials that start in the widened span hold every session that starts in the periods.
  const perSession: Plan = {
    source: { kind: 'session_partials' },
    select: [
      ...keep(['session_id']),
      { alias: 'start_ms', expr: { op: 'aggregate', fn: 'min', arg: col('min_ms') } },
      { alias: 'end_ms', expr: { op: 'aggregate', fn: 'max', arg: col('max_ms') } },
      ...entry.map(([c, partial]) => ({ alias: merged(c), expr: { op: 'aggregate', fn: 'arg_min', arg: col(partial), by: col('min_ms') } as Expr })),
      ...end.map(([c, partial]) => ({ alias: merged(c), expr: { op: 'aggregate', fn: 'arg_max', arg: col(partial), by: col('max_ms') } as Expr })),
      { alias: 'pageview_count', expr: total('pageviews') },
      { alias: 'autocapture_count', expr: total('autocaptures') },
      { alias: 'screen_count', expr: total('screens') },
      ...extra.map((c) => ({ alias: c, expr: extraItem[c] })),
    ],
    where: partialsIn(read),
    groupBy: [col('session_id')],
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
    ...keep(['session_id', 'start_ms', 'end_ms', 'pageview_count', 'autocapture_count', 'screen_count', ...extra]),
    { alias: 'session_duration', expr: duration },
    { alias: 'is_bounce', expr: isBounce },
    ...[...entry, ...end].map(([c]) => ({ alias: c, expr: nonEmpty(merged(c)) })),
  ]
  const sessions: Plan = { source: fromPlan(perSession), select: named }
  const base = named.map((n) => n.alias)
  const withPaths: Plan = {
    source: fromPlan(sessions),
    select: [
      ...keep(base),
      ...urls.map(([c, url, of]) => ({ alias: c, expr: of(col(url)) })),
      ...(channel
        ? [
            { alias: 'utm_source_lower', expr: channelSource(col('entry_utm_source')) },
            { alias: 'ref_kind', expr: sourceKindExpr(col('entry_referring_domain')) },
          ]
        : []),
    ],
  }
  if (!channel) return withPaths
  const columns = withPaths.select.map((c) => c.alias).filter((c) => c !== 'utm_source_lower' && c !== 'ref_kind')
  // The source kinds are computed once per session (the lookup table is large), then the rules read them.
  const kinds: Plan = {
    source: fromPlan(withPaths),
    select: [...keep([...columns, 'utm_source_lower', 'ref_kind']), { alias: 'source_kind', expr: sourceKindExpr(col('utm_source_lower')) }],
  }
  return {
    source: fromPlan(kinds),
    select: [
      ...keep(columns),
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
