-- Sessions kept current at ingestion (docs/web-analytics.md, "The sessions aggregate"), as PostHog's
-- raw_sessions (posthog/models/raw_sessions/sessions_v2.py, a materialized view over events): every
-- block inserted into `events` adds one partial row per (project, session) of the block through
-- `sessions_mv`, with the partial's first and last instant, the entry fields of its first event and
-- the end fields of its last ('' where the event has none), its last distinct id and its counts.
-- Queries merge a session's partials (GROUP BY session: the least min_ms gives the entry fields, the
-- greatest max_ms the end fields, the counts add up): right whatever order the events arrived in and
-- however many blocks they spanned. Sorted by start, so a period's query reads only the parts near it.
-- (18.16 has no SimpleAggregateFunction; partials stay plain rows, merged by the reading query.)
CREATE TABLE IF NOT EXISTS sessions (
  project_id         Int32,
  session_id         String,
  min_ms             Int64,
  max_ms             Int64,
  last_distinct_id   String,
  first_current_url        String,
  first_referring_domain   String,
  first_referrer           String,
  first_utm_source         String,
  first_utm_medium         String,
  first_utm_campaign       String,
  first_utm_term           String,
  first_utm_content        String,
  first_gclid              String,
  first_fbclid             String,
  first_gad_source         String,
  first_gclsrc             String,
  first_dclid              String,
  first_gbraid             String,
  first_wbraid             String,
  first_msclkid            String,
  first_twclid             String,
  first_li_fat_id          String,
  first_mc_cid             String,
  first_igshid             String,
  first_ttclid             String,
  first__kx                String,
  first_irclid             String,
  last_current_url         String,
  last_external_click_url  String,
  pageviews          UInt64,
  autocaptures       UInt64,
  screens            UInt64
) ENGINE = MergeTree
PARTITION BY toYYYYMM(toDateTime(intDiv(greatest(min_ms, 0), 1000), 'UTC'))
ORDER BY (project_id, min_ms, session_id);
CREATE MATERIALIZED VIEW IF NOT EXISTS sessions_mv TO sessions AS
SELECT project_id, ifNull(mat_session_id, '') AS session_id, min(timestamp_ms) AS min_ms, max(timestamp_ms) AS max_ms,
  argMax(distinct_id, timestamp_ms) AS last_distinct_id,
  argMin(prop_values[indexOf(prop_keys, '$current_url')], timestamp_ms) AS first_current_url,
  argMin(prop_values[indexOf(prop_keys, '$referring_domain')], timestamp_ms) AS first_referring_domain,
  argMin(prop_values[indexOf(prop_keys, '$referrer')], timestamp_ms) AS first_referrer,
  argMin(prop_values[indexOf(prop_keys, 'utm_source')], timestamp_ms) AS first_utm_source,
  argMin(prop_values[indexOf(prop_keys, 'utm_medium')], timestamp_ms) AS first_utm_medium,
  argMin(prop_values[indexOf(prop_keys, 'utm_campaign')], timestamp_ms) AS first_utm_campaign,
  argMin(prop_values[indexOf(prop_keys, 'utm_term')], timestamp_ms) AS first_utm_term,
  argMin(prop_values[indexOf(prop_keys, 'utm_content')], timestamp_ms) AS first_utm_content,
  argMin(prop_values[indexOf(prop_keys, 'gclid')], timestamp_ms) AS first_gclid,
  argMin(prop_values[indexOf(prop_keys, 'fbclid')], timestamp_ms) AS first_fbclid,
  argMin(prop_values[indexOf(prop_keys, 'gad_source')], timestamp_ms) AS first_gad_source,
  argMin(prop_values[indexOf(prop_keys, 'gclsrc')], timestamp_ms) AS first_gclsrc,
  argMin(prop_values[indexOf(prop_keys, 'dclid')], timestamp_ms) AS first_dclid,
  argMin(prop_values[indexOf(prop_keys, 'gbraid')], timestamp_ms) AS first_gbraid,
  argMin(prop_values[indexOf(prop_keys, 'wbraid')], timestamp_ms) AS first_wbraid,
  argMin(prop_values[indexOf(prop_keys, 'msclkid')], timestamp_ms) AS first_msclkid,
  argMin(prop_values[indexOf(prop_keys, 'twclid')], timestamp_ms) AS first_twclid,
  argMin(prop_values[indexOf(prop_keys, 'li_fat_id')], timestamp_ms) AS first_li_fat_id,
  argMin(prop_values[indexOf(prop_keys, 'mc_cid')], timestamp_ms) AS first_mc_cid,
  argMin(prop_values[indexOf(prop_keys, 'igshid')], timestamp_ms) AS first_igshid,
  argMin(prop_values[indexOf(prop_keys, 'ttclid')], timestamp_ms) AS first_ttclid,
  argMin(prop_values[indexOf(prop_keys, '_kx')], timestamp_ms) AS first__kx,
  argMin(prop_values[indexOf(prop_keys, 'irclid')], timestamp_ms) AS first_irclid,
  argMax(prop_values[indexOf(prop_keys, '$current_url')], timestamp_ms) AS last_current_url,
  argMax(prop_values[indexOf(prop_keys, '$external_click_url')], timestamp_ms) AS last_external_click_url,
  countIf(event = '$pageview') AS pageviews, countIf(event = '$autocapture') AS autocaptures, countIf(event = '$screen') AS screens
FROM events
WHERE ifNull(mat_session_id, '') != ''
GROUP BY project_id, session_id;
-- The events stored before this migration, one partial per session (the view's SELECT over the table).
INSERT INTO sessions
SELECT project_id, ifNull(mat_session_id, '') AS session_id, min(timestamp_ms) AS min_ms, max(timestamp_ms) AS max_ms,
  argMax(distinct_id, timestamp_ms) AS last_distinct_id,
  argMin(prop_values[indexOf(prop_keys, '$current_url')], timestamp_ms) AS first_current_url,
  argMin(prop_values[indexOf(prop_keys, '$referring_domain')], timestamp_ms) AS first_referring_domain,
  argMin(prop_values[indexOf(prop_keys, '$referrer')], timestamp_ms) AS first_referrer,
  argMin(prop_values[indexOf(prop_keys, 'utm_source')], timestamp_ms) AS first_utm_source,
  argMin(prop_values[indexOf(prop_keys, 'utm_medium')], timestamp_ms) AS first_utm_medium,
  argMin(prop_values[indexOf(prop_keys, 'utm_campaign')], timestamp_ms) AS first_utm_campaign,
  argMin(prop_values[indexOf(prop_keys, 'utm_term')], timestamp_ms) AS first_utm_term,
  argMin(prop_values[indexOf(prop_keys, 'utm_content')], timestamp_ms) AS first_utm_content,
  argMin(prop_values[indexOf(prop_keys, 'gclid')], timestamp_ms) AS first_gclid,
  argMin(prop_values[indexOf(prop_keys, 'fbclid')], timestamp_ms) AS first_fbclid,
  argMin(prop_values[indexOf(prop_keys, 'gad_source')], timestamp_ms) AS first_gad_source,
  argMin(prop_values[indexOf(prop_keys, 'gclsrc')], timestamp_ms) AS first_gclsrc,
  argMin(prop_values[indexOf(prop_keys, 'dclid')], timestamp_ms) AS first_dclid,
  argMin(prop_values[indexOf(prop_keys, 'gbraid')], timestamp_ms) AS first_gbraid,
  argMin(prop_values[indexOf(prop_keys, 'wbraid')], timestamp_ms) AS first_wbraid,
  argMin(prop_values[indexOf(prop_keys, 'msclkid')], timestamp_ms) AS first_msclkid,
  argMin(prop_values[indexOf(prop_keys, 'twclid')], timestamp_ms) AS first_twclid,
  argMin(prop_values[indexOf(prop_keys, 'li_fat_id')], timestamp_ms) AS first_li_fat_id,
  argMin(prop_values[indexOf(prop_keys, 'mc_cid')], timestamp_ms) AS first_mc_cid,
  argMin(prop_values[indexOf(prop_keys, 'igshid')], timestamp_ms) AS first_igshid,
  argMin(prop_values[indexOf(prop_keys, 'ttclid')], timestamp_ms) AS first_ttclid,
  argMin(prop_values[indexOf(prop_keys, '_kx')], timestamp_ms) AS first__kx,
  argMin(prop_values[indexOf(prop_keys, 'irclid')], timestamp_ms) AS first_irclid,
  argMax(prop_values[indexOf(prop_keys, '$current_url')], timestamp_ms) AS last_current_url,
  argMax(prop_values[indexOf(prop_keys, '$external_click_url')], timestamp_ms) AS last_external_click_url,
  countIf(event = '$pageview') AS pageviews, countIf(event = '$autocapture') AS autocaptures, countIf(event = '$screen') AS screens
FROM events
WHERE ifNull(mat_session_id, '') != ''
GROUP BY project_id, session_id;
