-- Recording bytes in the metadata database (TALLY_RECORDINGS_STORE=database, the default on PostgreSQL):
-- one row per block, so that every capture and api process of a cluster reads what any of them wrote.
-- A block row of session_recording_blocks points here with byte_offset = -id (files use offsets >= 0).
CREATE TABLE IF NOT EXISTS session_recording_bytes (
  id          BIGINT GENERATED ALWAYS AS IDENTITY,
  project_id  INTEGER NOT NULL,
  session_id  TEXT NOT NULL,
  data        BYTEA NOT NULL,
  PRIMARY KEY (project_id, session_id, id)
);
-- The bytes are gzip already: PostgreSQL need not try to compress them again.
ALTER TABLE session_recording_bytes ALTER COLUMN data SET STORAGE EXTERNAL;
