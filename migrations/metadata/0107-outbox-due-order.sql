-- The sender claims the oldest due messages in (next_attempt_at, id) order. With the index in that
-- order a claim reads as many entries as it takes, instead of every due message sorted (PGlite has
-- no autovacuum, so no statistics: its planner took a bitmap scan and a sort of the whole backlog).
DROP INDEX IF EXISTS outbox_due;
CREATE INDEX IF NOT EXISTS outbox_due_order ON outbox_messages (next_attempt_at, id) WHERE status = 'pending';
