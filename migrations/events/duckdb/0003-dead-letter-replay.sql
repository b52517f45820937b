-- Dead letters get an id (to name them in `tally dlq replay --id` and the API) and the time they were
-- replayed (null while pending). Existing letters are numbered in table order. The id is given by the
-- INSERT (nextval there), not by a column DEFAULT: DuckDB cannot replay a WAL holding an ALTER TABLE
-- whose default calls nextval (seen after a kill -9: "GetDefaultDatabase with no default database").
CREATE SEQUENCE IF NOT EXISTS events_dead_letter_id START 1;
ALTER TABLE events_dead_letter ADD COLUMN id BIGINT;
ALTER TABLE events_dead_letter ADD COLUMN replayed_at TIMESTAMPTZ;
UPDATE events_dead_letter SET id = nextval('events_dead_letter_id');
