-- Events on ClickHouse (docs/clickhouse.md). The SQL runs on 18.16 (Debian's package, CI) and on
-- current releases: no DateTime64, LowCardinality, TTL or skip indexes here.
-- `timestamp` is the second, clamped into DateTime's range (1970-2106), for the partition and the sort
-- key; `timestamp_ms` is the exact instant (milliseconds since 1970, any year), read by every query.
-- Duplicate uuids are kept out on insert (the event store confirms repeats against this table); the
-- ReplacingMergeTree collapses, in its merges, rows whose whole sort key repeats (a batch stored twice).
-- `prop_keys`/`prop_values`: the top-level properties (values as json_extract_string's text; keys
-- holding JSON null in `prop_null_keys`), filled by the event store, for exact top-level property
-- reads (visitParamExtract* match a key at any depth); `person_prop_*` the same of person_properties.
-- mat_*: the hot properties' text, mat_nonstring bit i set when key i is not a JSON string (as DuckDB).
CREATE TABLE IF NOT EXISTS events (
  uuid              UUID,
  project_id        Int32,
  event             String,
  distinct_id       String,
  properties        String,
  elements_chain    String,
  timestamp         DateTime('UTC'),
  timestamp_ms      Int64,
  created_at        DateTime('UTC'),
  created_at_ms     Int64,
  person_id         Nullable(UUID),
  person_properties Nullable(String),
  group_0           Nullable(String),
  group_1           Nullable(String),
  group_2           Nullable(String),
  group_3           Nullable(String),
  group_4           Nullable(String),
  prop_keys         Array(String),
  prop_values       Array(String),
  prop_null_keys    Array(String),
  person_prop_keys  Array(String),
  person_prop_values Array(String),
  person_prop_null_keys Array(String),
  mat_current_url   Nullable(String),
  mat_pathname      Nullable(String),
  mat_host          Nullable(String),
  mat_browser       Nullable(String),
  mat_os            Nullable(String),
  mat_device_type   Nullable(String),
  mat_referring_domain Nullable(String),
  mat_lib           Nullable(String),
  mat_nonstring     UInt8
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, toDate(timestamp), event, cityHash64(distinct_id), uuid);
