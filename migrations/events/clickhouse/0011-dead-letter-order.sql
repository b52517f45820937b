-- Dead letters are listed newest first by the order they were written (ids are random since several
-- workers write them): a per-process increasing microsecond clock. Rows written before keep 0 and
-- their sequential ids order them.
ALTER TABLE events_dead_letter ADD COLUMN written_seq UInt64 DEFAULT 0;
