-- Feature flags, cohorts, group types and the minimal person/group tables that flag evaluation
-- reads. Shapes follow PostHog's posthog_featureflag, posthog_cohort, posthog_cohortpeople,
-- posthog_grouptypemapping, posthog_group, posthog_person, posthog_persondistinctid and
-- posthog_featureflaghashkeyoverride, so the persons feature can extend them.

CREATE TABLE IF NOT EXISTS feature_flags (
  id                            SERIAL PRIMARY KEY,
  project_id                    INTEGER NOT NULL REFERENCES projects(id),
  key                           TEXT NOT NULL,
  name                          TEXT NOT NULL DEFAULT '',
  filters                       JSONB NOT NULL DEFAULT '{}',
  rollout_percentage            INTEGER,
  active                        BOOLEAN NOT NULL DEFAULT true,
  deleted                       BOOLEAN NOT NULL DEFAULT false,
  ensure_experience_continuity  BOOLEAN NOT NULL DEFAULT false,
  tags                          JSONB NOT NULL DEFAULT '[]',
  evaluation_runtime            TEXT NOT NULL DEFAULT 'all',
  version                       INTEGER NOT NULL DEFAULT 1,
  created_by                    INTEGER REFERENCES users(id),
  last_modified_by              INTEGER REFERENCES users(id),
  created_at                    TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at                    TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Keys are unique among the live flags of a project (a soft-deleted key can be reused).
CREATE UNIQUE INDEX IF NOT EXISTS feature_flags_project_key ON feature_flags (project_id, key) WHERE NOT deleted;
CREATE INDEX IF NOT EXISTS feature_flags_project ON feature_flags (project_id);

CREATE TABLE IF NOT EXISTS cohorts (
  id                  SERIAL PRIMARY KEY,
  project_id          INTEGER NOT NULL REFERENCES projects(id),
  name                TEXT NOT NULL DEFAULT '',
  description         TEXT NOT NULL DEFAULT '',
  filters             JSONB,
  groups              JSONB NOT NULL DEFAULT '[]',
  is_static           BOOLEAN NOT NULL DEFAULT false,
  deleted             BOOLEAN NOT NULL DEFAULT false,
  version             INTEGER NOT NULL DEFAULT 1,
  created_by          INTEGER REFERENCES users(id),
  created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_calculation    TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS cohorts_project ON cohorts (project_id);

CREATE TABLE IF NOT EXISTS group_type_mappings (
  project_id        INTEGER NOT NULL REFERENCES projects(id),
  group_type        TEXT NOT NULL,
  group_type_index  SMALLINT NOT NULL CHECK (group_type_index BETWEEN 0 AND 4),
  name_singular     TEXT,
  name_plural       TEXT,
  created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, group_type),
  UNIQUE (project_id, group_type_index)
);

CREATE TABLE IF NOT EXISTS persons (
  id          BIGSERIAL PRIMARY KEY,
  uuid        UUID NOT NULL UNIQUE,
  project_id  INTEGER NOT NULL REFERENCES projects(id),
  properties  JSONB NOT NULL DEFAULT '{}',
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS person_distinct_ids (
  project_id   INTEGER NOT NULL REFERENCES projects(id),
  distinct_id  TEXT NOT NULL,
  person_id    BIGINT NOT NULL REFERENCES persons(id),
  PRIMARY KEY (project_id, distinct_id)
);
CREATE INDEX IF NOT EXISTS person_distinct_ids_person ON person_distinct_ids (person_id);

CREATE TABLE IF NOT EXISTS cohort_people (
  cohort_id  INTEGER NOT NULL REFERENCES cohorts(id),
  person_id  BIGINT NOT NULL REFERENCES persons(id),
  PRIMARY KEY (cohort_id, person_id)
);
CREATE INDEX IF NOT EXISTS cohort_people_person ON cohort_people (person_id);

CREATE TABLE IF NOT EXISTS groups (
  project_id        INTEGER NOT NULL REFERENCES projects(id),
  group_type_index  SMALLINT NOT NULL,
  group_key         TEXT NOT NULL,
  group_properties  JSONB NOT NULL DEFAULT '{}',
  created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, group_type_index, group_key)
);

-- Experience continuity: the first hash key a person was evaluated with, per flag key. Never updated.
CREATE TABLE IF NOT EXISTS feature_flag_hash_key_overrides (
  project_id        INTEGER NOT NULL REFERENCES projects(id),
  person_id         BIGINT NOT NULL REFERENCES persons(id),
  feature_flag_key  TEXT NOT NULL,
  hash_key          TEXT NOT NULL,
  PRIMARY KEY (project_id, person_id, feature_flag_key)
);
