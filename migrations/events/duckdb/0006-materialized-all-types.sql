-- The materialized columns hold json_extract_string's text of their key for every value type (0005
-- kept strings only, NULL otherwise), so readers never parse `properties` for them; mat_nonstring has
-- bit i set (key order of src/storage/duckdb/materialized-properties.ts) when key i is not a string.
-- Only rows with such a value change: for the others 0005's strings and NULLs are already the text.
ALTER TABLE events ADD COLUMN mat_nonstring UTINYINT DEFAULT 0;
UPDATE events SET
  mat_current_url = json_extract_string(properties, '/$current_url'),
  mat_pathname = json_extract_string(properties, '/$pathname'),
  mat_host = json_extract_string(properties, '/$host'),
  mat_browser = json_extract_string(properties, '/$browser'),
  mat_os = json_extract_string(properties, '/$os'),
  mat_device_type = json_extract_string(properties, '/$device_type'),
  mat_referring_domain = json_extract_string(properties, '/$referring_domain'),
  mat_lib = json_extract_string(properties, '/$lib'),
  mat_nonstring = CAST(
    (CASE WHEN json_type(properties, '/$current_url') NOT IN ('VARCHAR', 'NULL') THEN 1 ELSE 0 END) |
    (CASE WHEN json_type(properties, '/$pathname') NOT IN ('VARCHAR', 'NULL') THEN 2 ELSE 0 END) |
    (CASE WHEN json_type(properties, '/$host') NOT IN ('VARCHAR', 'NULL') THEN 4 ELSE 0 END) |
    (CASE WHEN json_type(properties, '/$browser') NOT IN ('VARCHAR', 'NULL') THEN 8 ELSE 0 END) |
    (CASE WHEN json_type(properties, '/$os') NOT IN ('VARCHAR', 'NULL') THEN 16 ELSE 0 END) |
    (CASE WHEN json_type(properties, '/$device_type') NOT IN ('VARCHAR', 'NULL') THEN 32 ELSE 0 END) |
    (CASE WHEN json_type(properties, '/$referring_domain') NOT IN ('VARCHAR', 'NULL') THEN 64 ELSE 0 END) |
    (CASE WHEN json_type(properties, '/$lib') NOT IN ('VARCHAR', 'NULL') THEN 128 ELSE 0 END) AS UTINYINT)
WHERE
  json_type(properties, '/$current_url') NOT IN ('VARCHAR', 'NULL') OR
  json_type(properties, '/$pathname') NOT IN ('VARCHAR', 'NULL') OR
  json_type(properties, '/$host') NOT IN ('VARCHAR', 'NULL') OR
  json_type(properties, '/$browser') NOT IN ('VARCHAR', 'NULL') OR
  json_type(properties, '/$os') NOT IN ('VARCHAR', 'NULL') OR
  json_type(properties, '/$device_type') NOT IN ('VARCHAR', 'NULL') OR
  json_type(properties, '/$referring_domain') NOT IN ('VARCHAR', 'NULL') OR
  json_type(properties, '/$lib') NOT IN ('VARCHAR', 'NULL');
