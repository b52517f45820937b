-- Days of events a project keeps (the project field `event_retention_days`); NULL keeps them forever.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS event_retention_days INTEGER;
