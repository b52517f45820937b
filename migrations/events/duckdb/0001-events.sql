CREATE TABLE IF NOT EXISTS events (
  uuid            UUID NOT NULL,
  project_id      INTEGER NOT NULL,
  event           VARCHAR NOT NULL,
  distinct_id     VARCHAR NOT NULL,
  properties      VARCHAR NOT NULL,
  elements_chain  VARCHAR NOT NULL DEFAULT '',
  timestamp       TIMESTAMPTZ NOT NULL,
  created_at      TIMESTAMPTZ NOT NULL,
  person_id       UUID,
  person_properties VARCHAR,
  PRIMARY KEY (uuid)
);
