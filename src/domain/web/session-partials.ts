/**
 * The sessions aggregate the event stores keep (migrations `0011-sessions.sql` on DuckDB,
 * `0012-sessions.sql` on ClickHouse), as PostHog's raw_sessions (posthog/models/raw_sessions/sessions_v2.py):
 * each stored batch of events adds one partial row per (project, session) of the batch. A session is
 * the merge of its partials: the least `min_ms` and its partial's `first_*` fields, the greatest
 * `max_ms` and its partial's `last_*` fields and distinct id, the counts added up. Field values are
 * '' where the event had none (as PostHog's), so that arg_min/arg_max never skip a row.
 */

/** The entry fields (`first_<name>` columns): the property of the session's first event, by PostHog's session field (`$entry_<name>`). */
export const ENTRY_PROPERTIES: ReadonlyArray<readonly [name: string, property: string]> = [
  ['current_url', '$current_url'],
  ['referring_domain', '$referring_domain'],
  ['referrer', '$referrer'],
  ['utm_source', 'utm_source'],
  ['utm_medium', 'utm_medium'],
  ['utm_campaign', 'utm_campaign'],
  ['utm_term', 'utm_term'],
  ['utm_content', 'utm_content'],
  // The ad click ids PostHog keeps (its ATTRIBUTION_PROPERTIES, posthog-js's campaign params).
  ['gclid', 'gclid'],
  ['fbclid', 'fbclid'],
  ['gad_source', 'gad_source'],
  ['gclsrc', 'gclsrc'],
  ['dclid', 'dclid'],
  ['gbraid', 'gbraid'],
  ['wbraid', 'wbraid'],
  ['msclkid', 'msclkid'],
  ['twclid', 'twclid'],
  ['li_fat_id', 'li_fat_id'],
  ['mc_cid', 'mc_cid'],
  ['igshid', 'igshid'],
  ['ttclid', 'ttclid'],
  ['_kx', '_kx'],
  ['irclid', 'irclid'],
]

/** The end fields (`last_<name>` columns): the property of the session's last event. */
export const END_PROPERTIES: ReadonlyArray<readonly [name: string, property: string]> = [
  ['current_url', '$current_url'],
  ['external_click_url', '$external_click_url'],
]

/** The columns of a partial row, as both engines' `sessions` tables have them. */
export const SESSION_PARTIAL_COLUMNS: readonly string[] = [
  'project_id', 'session_id', 'min_ms', 'max_ms', 'last_distinct_id',
  ...ENTRY_PROPERTIES.map(([name]) => `first_${name}`),
  ...END_PROPERTIES.map(([name]) => `last_${name}`),
  'pageviews', 'autocaptures', 'screens',
]
