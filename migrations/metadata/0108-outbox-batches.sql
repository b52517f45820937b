-- One row per micro-batch and channel (a destination, or a project's chat webhook) instead of one per
-- message: the pipeline writes a row per target a batch sends to, holding that batch's messages for it
-- in `messages`, JSON text `[[idempotency key, body], ...]` (read back whole, queried into only for the
-- deliveries list; text, so the bodies go out exactly as rendered). Its messages are sent one by one,
-- each under its own key; only those not sent (a retry due later, a dead letter, one not tried before a
-- stop) get a row of their own in outbox_messages, written when the batch row is done. `batch_key` (the channel and a hash
-- of the keys) makes a redelivered micro-batch add nothing.
-- status: pending (to send; leased by `locked_until` on PostgreSQL), sent (done: every message has been
-- sent or has its own row), dropped (over the backlog limit).
CREATE TABLE IF NOT EXISTS outbox_batches (
  id           BIGSERIAL PRIMARY KEY,
  project_id   INTEGER NOT NULL,
  channel      TEXT NOT NULL,
  batch_key    TEXT NOT NULL UNIQUE,
  url          TEXT NOT NULL,
  headers      JSONB NOT NULL DEFAULT '{}',
  size         INTEGER NOT NULL,
  messages     TEXT NOT NULL,
  status       TEXT NOT NULL DEFAULT 'pending',
  locked_until TIMESTAMPTZ,
  last_status  INTEGER,
  created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
  sent_at      TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS outbox_batches_pending ON outbox_batches (id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS outbox_batches_channel_recent ON outbox_batches (project_id, channel, id DESC);
