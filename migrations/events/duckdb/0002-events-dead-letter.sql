-- Events the ingestion pipeline could not process, with the reason; replayable from `payload`
-- (the queue message as delivered).
CREATE TABLE IF NOT EXISTS events_dead_letter (
  failed_at   TIMESTAMPTZ NOT NULL,
  uuid        VARCHAR,
  project_id  INTEGER,
  step        VARCHAR NOT NULL,
  reason      VARCHAR NOT NULL,
  error       VARCHAR,
  payload     VARCHAR NOT NULL
);
