-- Event and property definitions (PostHog's posthog_eventdefinition, posthog_propertydefinition and
-- posthog_eventproperty), kept current by the ingestion pipeline's definitions step. A property
-- definition's `type` is 1 event, 2 person, 3 group; `group_type_index` is -1 unless the type is group
-- (so it can be part of the key). `property_type` is the type first detected; it is never changed by
-- later values (PostHog keeps the first one).
CREATE TABLE IF NOT EXISTS event_definitions (
  id            UUID NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  project_id    INTEGER NOT NULL REFERENCES projects(id),
  name          TEXT NOT NULL,
  created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_seen_at  TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (project_id, name)
);

CREATE TABLE IF NOT EXISTS property_definitions (
  id                UUID NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  project_id        INTEGER NOT NULL REFERENCES projects(id),
  type              SMALLINT NOT NULL CHECK (type IN (1, 2, 3)),
  group_type_index  SMALLINT NOT NULL DEFAULT -1 CHECK (group_type_index BETWEEN -1 AND 4),
  name              TEXT NOT NULL,
  property_type     TEXT CHECK (property_type IN ('String', 'Numeric', 'Boolean', 'DateTime')),
  created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_seen_at      TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (project_id, type, group_type_index, name)
);

-- Which event properties were seen with which events (the `event_names` filter).
CREATE TABLE IF NOT EXISTS event_properties (
  project_id  INTEGER NOT NULL REFERENCES projects(id),
  event       TEXT NOT NULL,
  property    TEXT NOT NULL,
  PRIMARY KEY (project_id, event, property)
);
CREATE INDEX IF NOT EXISTS event_properties_property ON event_properties (project_id, property);
