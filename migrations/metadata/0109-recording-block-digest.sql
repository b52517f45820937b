-- A block's content digest (sha256 of its `[windowId, event]` lines): posthog-js sends a `/s/` batch
-- again, same snapshots, when it saw no answer (its retry, or the unload beacon re-sending a fetch the
-- navigation cut off though it had arrived). The second copy's bytes are appended like any block, but
-- its row is not inserted, so a session's counts and snapshots hold each batch once. Rows written
-- before this column (NULL) never conflict.
ALTER TABLE session_recording_blocks ADD COLUMN IF NOT EXISTS content_digest TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS session_recording_blocks_digest ON session_recording_blocks (project_id, session_id, content_digest);
