-- `$session_id` kept in a column of its own (PostHog materializes it too): sessions and web analytics
-- group by it over every event of a period. It holds json_extract_string's text like the other mat_*
-- columns (materialized-properties.ts, the ninth key: no mat_nonstring bit); older rows filled here.
ALTER TABLE events ADD COLUMN mat_session_id VARCHAR;
UPDATE events SET mat_session_id = json_extract_string(properties, '/$session_id') WHERE json_extract_string(properties, '/$session_id') IS NOT NULL;
