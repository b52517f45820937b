-- Data that leaves: the project's incoming webhook for actions that notify (PostHog's
-- `slack_incoming_webhook`), webhook destinations, and the durable outbox both send through.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS slack_incoming_webhook TEXT;

CREATE TABLE IF NOT EXISTS destinations (
  id             SERIAL PRIMARY KEY,
  project_id     INTEGER NOT NULL REFERENCES projects(id),
  name           TEXT NOT NULL,
  url            TEXT NOT NULL,
  enabled        BOOLEAN NOT NULL DEFAULT true,
  headers        JSONB NOT NULL DEFAULT '{}',
  filters        JSONB NOT NULL DEFAULT '{}',
  body_template  TEXT,
  deleted        BOOLEAN NOT NULL DEFAULT false,
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS destinations_project ON destinations (project_id);

-- One row per message to send. `idempotency_key` is the same across retries and redeliveries of
-- the batch that produced it (`chat:<action>:<event uuid>`, `destination:<id>:<event uuid>`), so a
-- replayed micro-batch adds nothing; it is sent as the `Idempotency-Key` header.
-- status: pending (due at next_attempt_at), sent, failed (dead-lettered after its tries or a 4xx),
-- dropped (over the backlog limit).
CREATE TABLE IF NOT EXISTS outbox_messages (
  id               BIGSERIAL PRIMARY KEY,
  project_id       INTEGER NOT NULL,
  channel          TEXT NOT NULL,
  idempotency_key  TEXT NOT NULL UNIQUE,
  url              TEXT NOT NULL,
  headers          JSONB NOT NULL DEFAULT '{}',
  body             TEXT NOT NULL,
  status           TEXT NOT NULL DEFAULT 'pending',
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  locked_until     TIMESTAMPTZ,
  last_status      INTEGER,
  last_error       TEXT,
  created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  sent_at          TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS outbox_due ON outbox_messages (next_attempt_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS outbox_channel_recent ON outbox_messages (project_id, channel, id DESC);
