-- The events table without its uuid PRIMARY KEY. The key's index covered every event ever stored, and
-- random (v4) uuids, which posthog-python sends, made each insert touch all of it: it had to stay in
-- memory (~50 bytes per event), inserts got dearer as the table grew, and past ~2.5M events they failed
-- under a 256MB memory limit. Duplicates are now kept out by the event store, against a window of the
-- latest uuids (src/storage/duckdb/duckdb-event-store.ts). DuckDB cannot drop a key, so the table is
-- copied into one without it, in the same column order, rows in their stored order.
CREATE TABLE events_unkeyed (
  uuid              UUID NOT NULL,
  project_id        INTEGER NOT NULL,
  event             VARCHAR NOT NULL,
  distinct_id       VARCHAR NOT NULL,
  properties        VARCHAR NOT NULL,
  elements_chain    VARCHAR NOT NULL DEFAULT '',
  timestamp         TIMESTAMPTZ NOT NULL,
  created_at        TIMESTAMPTZ NOT NULL,
  person_id         UUID,
  person_properties VARCHAR,
  group_0           VARCHAR,
  group_1           VARCHAR,
  group_2           VARCHAR,
  group_3           VARCHAR,
  group_4           VARCHAR,
  mat_current_url   VARCHAR,
  mat_pathname      VARCHAR,
  mat_host          VARCHAR,
  mat_browser       VARCHAR,
  mat_os            VARCHAR,
  mat_device_type   VARCHAR,
  mat_referring_domain VARCHAR,
  mat_lib           VARCHAR,
  mat_nonstring     UTINYINT DEFAULT 0
);
INSERT INTO events_unkeyed SELECT * FROM events;
DROP TABLE events;
ALTER TABLE events_unkeyed RENAME TO events;
