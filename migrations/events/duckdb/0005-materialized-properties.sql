-- Properties read most by breakdowns, filters and action url steps, kept in columns of their own
-- (PostHog's mat_* columns): the value when it is a JSON string, otherwise NULL (readers then parse
-- `properties`). Written by the event store on insert; existing rows filled here with the same
-- expression (src/storage/duckdb/materialized-properties.ts).
ALTER TABLE events ADD COLUMN mat_current_url VARCHAR;
ALTER TABLE events ADD COLUMN mat_pathname VARCHAR;
ALTER TABLE events ADD COLUMN mat_host VARCHAR;
ALTER TABLE events ADD COLUMN mat_browser VARCHAR;
ALTER TABLE events ADD COLUMN mat_os VARCHAR;
ALTER TABLE events ADD COLUMN mat_device_type VARCHAR;
ALTER TABLE events ADD COLUMN mat_referring_domain VARCHAR;
ALTER TABLE events ADD COLUMN mat_lib VARCHAR;
UPDATE events SET
  mat_current_url = (CASE WHEN json_type(json_extract(properties, '/$current_url')) = 'VARCHAR' THEN json_extract_string(properties, '/$current_url') END),
  mat_pathname = (CASE WHEN json_type(json_extract(properties, '/$pathname')) = 'VARCHAR' THEN json_extract_string(properties, '/$pathname') END),
  mat_host = (CASE WHEN json_type(json_extract(properties, '/$host')) = 'VARCHAR' THEN json_extract_string(properties, '/$host') END),
  mat_browser = (CASE WHEN json_type(json_extract(properties, '/$browser')) = 'VARCHAR' THEN json_extract_string(properties, '/$browser') END),
  mat_os = (CASE WHEN json_type(json_extract(properties, '/$os')) = 'VARCHAR' THEN json_extract_string(properties, '/$os') END),
  mat_device_type = (CASE WHEN json_type(json_extract(properties, '/$device_type')) = 'VARCHAR' THEN json_extract_string(properties, '/$device_type') END),
  mat_referring_domain = (CASE WHEN json_type(json_extract(properties, '/$referring_domain')) = 'VARCHAR' THEN json_extract_string(properties, '/$referring_domain') END),
  mat_lib = (CASE WHEN json_type(json_extract(properties, '/$lib')) = 'VARCHAR' THEN json_extract_string(properties, '/$lib') END);
