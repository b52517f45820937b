-- Session replay metadata. The recording bytes live apart (one file per session in the data dir);
-- a block row points at a byte range of that file and carries what the session row adds up.
-- Rows are keyed by their byte range, so a block delivered twice by the recording queue is stored once.
CREATE TABLE IF NOT EXISTS session_recording_blocks (
  project_id           INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  session_id           TEXT NOT NULL,
  byte_offset          BIGINT NOT NULL,
  byte_length          INTEGER NOT NULL,
  start_time           TIMESTAMPTZ NOT NULL,
  end_time             TIMESTAMPTZ NOT NULL,
  distinct_id          TEXT NOT NULL,
  window_ids           TEXT[] NOT NULL DEFAULT '{}',
  event_count          INTEGER NOT NULL,
  click_count          INTEGER NOT NULL,
  keypress_count       INTEGER NOT NULL,
  mouse_activity_count INTEGER NOT NULL,
  console_log_count    INTEGER NOT NULL,
  console_warn_count   INTEGER NOT NULL,
  console_error_count  INTEGER NOT NULL,
  active_ms            BIGINT NOT NULL,
  first_url            TEXT,
  first_url_time       TIMESTAMPTZ,
  PRIMARY KEY (project_id, session_id, byte_offset)
);

-- One row per recorded session, recomputed set-based from its blocks by the replay worker.
CREATE TABLE IF NOT EXISTS session_recordings (
  project_id           INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  session_id           TEXT NOT NULL,
  distinct_id          TEXT NOT NULL,
  start_time           TIMESTAMPTZ NOT NULL,
  end_time             TIMESTAMPTZ NOT NULL,
  duration_seconds     INTEGER NOT NULL,
  active_seconds       INTEGER NOT NULL,
  click_count          INTEGER NOT NULL,
  keypress_count       INTEGER NOT NULL,
  mouse_activity_count INTEGER NOT NULL,
  console_log_count    INTEGER NOT NULL,
  console_warn_count   INTEGER NOT NULL,
  console_error_count  INTEGER NOT NULL,
  first_url            TEXT,
  size_bytes           BIGINT NOT NULL,
  block_count          INTEGER NOT NULL,
  updated_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, session_id)
);
CREATE INDEX IF NOT EXISTS session_recordings_start ON session_recordings (project_id, start_time DESC);
CREATE INDEX IF NOT EXISTS session_recordings_distinct_id ON session_recordings (project_id, distinct_id);
CREATE INDEX IF NOT EXISTS session_recordings_end ON session_recordings (end_time);
