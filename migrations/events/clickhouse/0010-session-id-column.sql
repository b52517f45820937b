-- `$session_id` kept in a column of its own (as DuckDB's 0010): the event store writes it; rows written
-- before it read it from the top-level key/value arrays through the default (no mutation needed).
ALTER TABLE events ADD COLUMN mat_session_id Nullable(String) DEFAULT if(has(prop_keys, '$session_id'), prop_values[indexOf(prop_keys, '$session_id')], NULL);
