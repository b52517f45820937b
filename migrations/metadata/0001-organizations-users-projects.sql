CREATE TABLE IF NOT EXISTS organizations (
  id          SERIAL PRIMARY KEY,
  uuid        UUID NOT NULL UNIQUE,
  name        TEXT NOT NULL,
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS users (
  id                  SERIAL PRIMARY KEY,
  uuid                UUID NOT NULL UNIQUE,
  distinct_id         TEXT NOT NULL UNIQUE,
  first_name          TEXT NOT NULL DEFAULT '',
  last_name           TEXT NOT NULL DEFAULT '',
  email               TEXT NOT NULL UNIQUE,
  is_email_verified   BOOLEAN NOT NULL DEFAULT false,
  organization_id     INTEGER NOT NULL REFERENCES organizations(id),
  current_project_id  INTEGER,
  created_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS projects (
  id               SERIAL PRIMARY KEY,
  uuid             UUID NOT NULL UNIQUE,
  organization_id  INTEGER NOT NULL REFERENCES organizations(id),
  name             TEXT NOT NULL,
  api_token        TEXT NOT NULL UNIQUE,
  timezone         TEXT NOT NULL DEFAULT 'UTC',
  created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Membership levels as PostHog's OrganizationMembership: 1 member, 8 admin, 15 owner.
CREATE TABLE IF NOT EXISTS project_members (
  project_id  INTEGER NOT NULL REFERENCES projects(id),
  user_id     INTEGER NOT NULL REFERENCES users(id),
  level       SMALLINT NOT NULL DEFAULT 1,
  PRIMARY KEY (project_id, user_id)
);

-- Personal API keys are kept only as a sha256 hash (PostHog's `sha256$` mode) plus a display mask.
CREATE TABLE IF NOT EXISTS personal_api_keys (
  id            SERIAL PRIMARY KEY,
  user_id       INTEGER NOT NULL REFERENCES users(id),
  label         TEXT NOT NULL DEFAULT '',
  secure_value  TEXT NOT NULL UNIQUE,
  mask_value    TEXT NOT NULL,
  created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_used_at  TIMESTAMPTZ
);
