-- PostHog's project settings the insights read: `test_account_filters` (the property filters that
-- "filter out internal and test users" applies) and `path_cleaning_filters` (paths' {alias, regex} rules).
ALTER TABLE projects ADD COLUMN IF NOT EXISTS test_account_filters JSONB NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE projects ADD COLUMN IF NOT EXISTS path_cleaning_filters JSONB NOT NULL DEFAULT '[]'::jsonb;
