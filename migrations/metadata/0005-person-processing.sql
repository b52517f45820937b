-- Person processing in the ingestion pipeline (PostHog's posthog_person.is_identified / version and
-- posthog_personlessdistinctid). Persons created before this migration read as anonymous, version 0.

ALTER TABLE persons ADD COLUMN IF NOT EXISTS is_identified BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE persons ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS persons_project ON persons (project_id);

-- Distinct ids that sent personless events ($process_person_profile: false) before having a person:
-- when one gets a person, its earlier events are pointed at it by a person-id override.
CREATE TABLE IF NOT EXISTS personless_distinct_ids (
  project_id   INTEGER NOT NULL REFERENCES projects(id),
  distinct_id  TEXT NOT NULL,
  created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, distinct_id)
);
