CREATE TABLE IF NOT EXISTS insights (
  id           SERIAL PRIMARY KEY,
  project_id   INTEGER NOT NULL REFERENCES projects(id),
  short_id     TEXT NOT NULL UNIQUE,
  name         TEXT,
  description  TEXT NOT NULL DEFAULT '',
  query        JSONB,
  filters      JSONB NOT NULL DEFAULT '{}',
  deleted      BOOLEAN NOT NULL DEFAULT false,
  created_by   INTEGER REFERENCES users(id),
  created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS insights_project ON insights (project_id);

CREATE TABLE IF NOT EXISTS dashboards (
  id                 SERIAL PRIMARY KEY,
  project_id         INTEGER NOT NULL REFERENCES projects(id),
  name               TEXT,
  description        TEXT NOT NULL DEFAULT '',
  pinned             BOOLEAN NOT NULL DEFAULT false,
  deleted            BOOLEAN NOT NULL DEFAULT false,
  creation_mode      TEXT NOT NULL DEFAULT 'default',
  filters            JSONB NOT NULL DEFAULT '{}',
  variables          JSONB NOT NULL DEFAULT '{}',
  tags               JSONB NOT NULL DEFAULT '[]',
  restriction_level  SMALLINT NOT NULL DEFAULT 21,
  created_by         INTEGER REFERENCES users(id),
  created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_accessed_at   TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS dashboards_project ON dashboards (project_id);

CREATE TABLE IF NOT EXISTS dashboard_texts (
  id          SERIAL PRIMARY KEY,
  project_id  INTEGER NOT NULL REFERENCES projects(id),
  body        TEXT NOT NULL DEFAULT '',
  created_by  INTEGER REFERENCES users(id),
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_modified_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS dashboard_tiles (
  id                 SERIAL PRIMARY KEY,
  dashboard_id       INTEGER NOT NULL REFERENCES dashboards(id),
  insight_id         INTEGER REFERENCES insights(id),
  text_id            INTEGER REFERENCES dashboard_texts(id),
  layouts            JSONB NOT NULL DEFAULT '{}',
  color              TEXT,
  filters_overrides  JSONB,
  deleted            BOOLEAN NOT NULL DEFAULT false,
  created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
  CHECK ((insight_id IS NULL) <> (text_id IS NULL))
);
CREATE INDEX IF NOT EXISTS dashboard_tiles_dashboard ON dashboard_tiles (dashboard_id);

CREATE TABLE IF NOT EXISTS actions (
  id                    SERIAL PRIMARY KEY,
  project_id            INTEGER NOT NULL REFERENCES projects(id),
  name                  TEXT,
  description           TEXT NOT NULL DEFAULT '',
  tags                  JSONB NOT NULL DEFAULT '[]',
  post_to_slack         BOOLEAN NOT NULL DEFAULT false,
  slack_message_format  TEXT NOT NULL DEFAULT '',
  steps                 JSONB NOT NULL DEFAULT '[]',
  deleted               BOOLEAN NOT NULL DEFAULT false,
  is_calculating        BOOLEAN NOT NULL DEFAULT false,
  last_calculated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  pinned_at             TIMESTAMPTZ,
  created_by            INTEGER REFERENCES users(id),
  created_at            TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at            TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS actions_project ON actions (project_id);
