-- Session replay settings of a project (session_recording_opt_in, sample rate, minimum duration,
-- linked flag, console logs, network payload capture, masking, retention), as one JSON object:
-- missing keys take their defaults (src/domain/replay/recording-settings.ts).
ALTER TABLE projects ADD COLUMN IF NOT EXISTS session_recording jsonb NOT NULL DEFAULT '{}'::jsonb;
