-- Dead letters get an id (to name them in `tally dlq replay --id` and the API) and the time they were
-- replayed (null while pending). Existing letters are numbered in table order.
CREATE SEQUENCE IF NOT EXISTS events_dead_letter_id START 1;
ALTER TABLE events_dead_letter ADD COLUMN id BIGINT DEFAULT nextval('events_dead_letter_id');
ALTER TABLE events_dead_letter ADD COLUMN replayed_at TIMESTAMPTZ;
