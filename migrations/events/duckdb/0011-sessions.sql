-- Sessions kept current at ingestion (docs/web-analytics.md, "The sessions aggregate"), as PostHog's
-- raw_sessions (posthog/models/raw_sessions/sessions_v2.py): one partial row per (project, session) of
-- each micro-batch (the event store appends them in the transaction that stores the batch), with the
-- partial's first and last instant, the entry fields of its first event and the end fields of its last
-- ('' where the event has none, as PostHog's), its last distinct id and its counts. Queries merge a
-- session's partials (the least min_ms gives the entry fields, the greatest max_ms the end fields, the
-- counts add up), which is right whatever order the events arrived in and however many batches they
-- spanned; the compaction (duckdb-session-compaction.ts) merges them in place to keep their number low.
CREATE TABLE IF NOT EXISTS sessions (
  project_id         INTEGER NOT NULL,
  session_id         VARCHAR NOT NULL,
  min_ms             BIGINT NOT NULL,
  max_ms             BIGINT NOT NULL,
  last_distinct_id   VARCHAR NOT NULL,
  first_current_url        VARCHAR NOT NULL,
  first_referring_domain   VARCHAR NOT NULL,
  first_referrer           VARCHAR NOT NULL,
  first_utm_source         VARCHAR NOT NULL,
  first_utm_medium         VARCHAR NOT NULL,
  first_utm_campaign       VARCHAR NOT NULL,
  first_utm_term           VARCHAR NOT NULL,
  first_utm_content        VARCHAR NOT NULL,
  first_gclid              VARCHAR NOT NULL,
  first_fbclid             VARCHAR NOT NULL,
  first_gad_source         VARCHAR NOT NULL,
  first_gclsrc             VARCHAR NOT NULL,
  first_dclid              VARCHAR NOT NULL,
  first_gbraid             VARCHAR NOT NULL,
  first_wbraid             VARCHAR NOT NULL,
  first_msclkid            VARCHAR NOT NULL,
  first_twclid             VARCHAR NOT NULL,
  first_li_fat_id          VARCHAR NOT NULL,
  first_mc_cid             VARCHAR NOT NULL,
  first_igshid             VARCHAR NOT NULL,
  first_ttclid             VARCHAR NOT NULL,
  first__kx                VARCHAR NOT NULL,
  first_irclid             VARCHAR NOT NULL,
  last_current_url         VARCHAR NOT NULL,
  last_external_click_url  VARCHAR NOT NULL,
  pageviews          BIGINT NOT NULL,
  autocaptures       BIGINT NOT NULL,
  screens            BIGINT NOT NULL
);
-- The partials of the events of a table shaped as `events` (the batch the store stages, or `events`
-- itself for the backfill below and the bench): the one definition of a partial on DuckDB.
CREATE OR REPLACE MACRO session_partials(relation) AS TABLE
  SELECT project_id, session_id, min_ms, max_ms, last_distinct_id,
    coalesce(first[1], '') AS first_current_url,
    coalesce(first[2], '') AS first_referring_domain,
    coalesce(first[3], '') AS first_referrer,
    coalesce(first[4], '') AS first_utm_source,
    coalesce(first[5], '') AS first_utm_medium,
    coalesce(first[6], '') AS first_utm_campaign,
    coalesce(first[7], '') AS first_utm_term,
    coalesce(first[8], '') AS first_utm_content,
    coalesce(first[9], '') AS first_gclid,
    coalesce(first[10], '') AS first_fbclid,
    coalesce(first[11], '') AS first_gad_source,
    coalesce(first[12], '') AS first_gclsrc,
    coalesce(first[13], '') AS first_dclid,
    coalesce(first[14], '') AS first_gbraid,
    coalesce(first[15], '') AS first_wbraid,
    coalesce(first[16], '') AS first_msclkid,
    coalesce(first[17], '') AS first_twclid,
    coalesce(first[18], '') AS first_li_fat_id,
    coalesce(first[19], '') AS first_mc_cid,
    coalesce(first[20], '') AS first_igshid,
    coalesce(first[21], '') AS first_ttclid,
    coalesce(first[22], '') AS first__kx,
    coalesce(first[23], '') AS first_irclid,
    coalesce(last[1], '') AS last_current_url,
    coalesce(last[2], '') AS last_external_click_url,
    pageviews, autocaptures, screens
  FROM (
    SELECT project_id, mat_session_id AS session_id, min(ms) AS min_ms, max(ms) AS max_ms, arg_max(distinct_id, ms) AS last_distinct_id,
      arg_min(json_extract_string(properties, ['/$current_url', '/$referring_domain', '/$referrer', '/utm_source', '/utm_medium', '/utm_campaign', '/utm_term', '/utm_content', '/gclid', '/fbclid', '/gad_source', '/gclsrc', '/dclid', '/gbraid', '/wbraid', '/msclkid', '/twclid', '/li_fat_id', '/mc_cid', '/igshid', '/ttclid', '/_kx', '/irclid']), ms) AS first,
      arg_max(json_extract_string(properties, ['/$current_url', '/$external_click_url']), ms) AS last,
      count(*) FILTER (WHERE event = '$pageview') AS pageviews,
      count(*) FILTER (WHERE event = '$autocapture') AS autocaptures,
      count(*) FILTER (WHERE event = '$screen') AS screens
    FROM (SELECT *, epoch_ms(timestamp) AS ms FROM query_table(relation))
    WHERE mat_session_id IS NOT NULL AND mat_session_id <> ''
    GROUP BY project_id, mat_session_id
  );
-- The events stored before this migration, one partial per session.
INSERT INTO sessions SELECT * FROM session_partials('events');
