-- PostHog's project settings that posthog-js reads through remote config (/decide, /flags,
-- /array/<token>/config): nullable booleans with PostHog's Team defaults (posthog/models/team/team.py),
-- so GET shows what PostHog shows, null included.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS autocapture_opt_out BOOLEAN;
ALTER TABLE projects ADD COLUMN IF NOT EXISTS autocapture_exceptions_opt_in BOOLEAN;
ALTER TABLE projects ADD COLUMN IF NOT EXISTS autocapture_web_vitals_opt_in BOOLEAN;
ALTER TABLE projects ADD COLUMN IF NOT EXISTS capture_performance_opt_in BOOLEAN DEFAULT true;
ALTER TABLE projects ADD COLUMN IF NOT EXISTS capture_dead_clicks BOOLEAN DEFAULT false;
ALTER TABLE projects ADD COLUMN IF NOT EXISTS heatmaps_opt_in BOOLEAN;
