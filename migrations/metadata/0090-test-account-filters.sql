-- PostHog's `test_account_filters`: the property filters that "filter out internal and test users"
-- applies to a query (`filterTestAccounts`), a JSON list of event/person property filters.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS test_account_filters JSONB NOT NULL DEFAULT '[]'::jsonb;
