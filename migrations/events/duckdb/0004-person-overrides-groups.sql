-- Persons on events: merges after the fact resolve through this table (PostHog's
-- person_distinct_id_overrides, keyed by person id): events stored with old_person_id belong to
-- override_person_id. Chains are resolved on write, so a query needs one LEFT JOIN.
CREATE TABLE IF NOT EXISTS person_overrides (
  project_id          INTEGER NOT NULL,
  old_person_id       UUID NOT NULL,
  override_person_id  UUID NOT NULL,
  version             BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, old_person_id)
);

-- The event's groups ($group_0..4 of PostHog's events table), for queries without a join.
ALTER TABLE events ADD COLUMN group_0 VARCHAR;
ALTER TABLE events ADD COLUMN group_1 VARCHAR;
ALTER TABLE events ADD COLUMN group_2 VARCHAR;
ALTER TABLE events ADD COLUMN group_3 VARCHAR;
ALTER TABLE events ADD COLUMN group_4 VARCHAR;
