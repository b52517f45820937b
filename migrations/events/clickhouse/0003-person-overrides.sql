-- Persons on events: events stored with old_person_id belong to override_person_id (PostHog's
-- person_distinct_id_overrides). The latest version of a (project, old person) row wins: readers
-- take argMax(override_person_id, version) and skip rows whose latest state is deleted; chains are
-- resolved on write.
CREATE TABLE IF NOT EXISTS person_overrides (
  project_id          Int32,
  old_person_id       UUID,
  override_person_id  UUID,
  version             UInt64,
  is_deleted          UInt8
) ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, old_person_id);
