-- An insight's last computed result (PostHog's cached insight result): the query response, when it
-- was computed and the key of the query it answers (project, zone and query). Writing a new query
-- clears it.
ALTER TABLE insights ADD COLUMN IF NOT EXISTS cached_result JSONB;
ALTER TABLE insights ADD COLUMN IF NOT EXISTS cached_at TIMESTAMPTZ;
ALTER TABLE insights ADD COLUMN IF NOT EXISTS cache_key TEXT;
