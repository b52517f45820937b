-- Accounts: passwords, organization membership, browser sessions, invitations and set-up links.
-- Every secret (session, invite and set-up tokens) is kept only as a sha256 hash.

-- scrypt, as `scrypt$N$r$p$salt$hash`; NULL: no password yet (the bootstrap owner before set-up).
ALTER TABLE users ADD COLUMN IF NOT EXISTS password_hash TEXT;

-- PostHog's OrganizationMembership: 1 member, 8 admin, 15 owner. The role that governs members,
-- invites and project settings (project_members keeps the per-project access it always had).
CREATE TABLE IF NOT EXISTS organization_members (
  id               UUID NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  organization_id  INTEGER NOT NULL REFERENCES organizations(id),
  user_id          INTEGER NOT NULL REFERENCES users(id),
  level            SMALLINT NOT NULL DEFAULT 1,
  joined_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);

-- Users made before this migration: the level they hold on their current project (the bootstrap
-- owner's 15), else member.
INSERT INTO organization_members (organization_id, user_id, level, joined_at)
SELECT u.organization_id, u.id,
       COALESCE((SELECT m.level FROM project_members m WHERE m.user_id = u.id AND m.project_id = u.current_project_id), 1),
       u.created_at
FROM users u
ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS sessions (
  id          SERIAL PRIMARY KEY,
  token_hash  TEXT NOT NULL UNIQUE,
  user_id     INTEGER NOT NULL REFERENCES users(id),
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  expires_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user_id);

CREATE TABLE IF NOT EXISTS organization_invites (
  id               UUID PRIMARY KEY,
  organization_id  INTEGER NOT NULL REFERENCES organizations(id),
  token_hash       TEXT NOT NULL UNIQUE,
  target_email     TEXT NOT NULL,
  level            SMALLINT NOT NULL DEFAULT 1,
  created_by       INTEGER REFERENCES users(id),
  created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  expires_at       TIMESTAMPTZ NOT NULL,
  used_at          TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS organization_invites_org ON organization_invites (organization_id);

-- One-time links that let a user choose their e-mail and password (the first start's owner set-up,
-- `tally users create` without a password).
CREATE TABLE IF NOT EXISTS setup_tokens (
  id          SERIAL PRIMARY KEY,
  token_hash  TEXT NOT NULL UNIQUE,
  user_id     INTEGER NOT NULL REFERENCES users(id),
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  expires_at  TIMESTAMPTZ NOT NULL,
  used_at     TIMESTAMPTZ
);
