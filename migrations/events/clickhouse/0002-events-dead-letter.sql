-- Events the ingestion pipeline could not process, replayable from `payload`. Append-only: a replay
-- is a row of events_dead_letter_replay (ClickHouse updates are asynchronous mutations).
CREATE TABLE IF NOT EXISTS events_dead_letter (
  id          UInt64,
  failed_at_ms Int64,
  uuid        Nullable(String),
  project_id  Nullable(Int32),
  step        String,
  reason      String,
  error       Nullable(String),
  payload     String
) ENGINE = MergeTree
ORDER BY id;
CREATE TABLE IF NOT EXISTS events_dead_letter_replay (
  id            UInt64,
  replayed_at_ms Int64
) ENGINE = MergeTree
ORDER BY id;
