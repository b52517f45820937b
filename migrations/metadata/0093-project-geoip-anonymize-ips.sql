-- PostHog's `anonymize_ips` (discard the client IP: events are stored without `$ip`) and Tally's
-- `geoip_enabled` (add the `$geoip_*` location of `$ip` at ingestion; on by default, as in PostHog).
ALTER TABLE projects ADD COLUMN IF NOT EXISTS anonymize_ips BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE projects ADD COLUMN IF NOT EXISTS geoip_enabled BOOLEAN NOT NULL DEFAULT true;
