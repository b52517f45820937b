import type { StoredEvent } from '../../ingestion/event-store.ts'

/** A person-id override as stored: events of `oldPersonId` belong to `overridePersonId`. */
export interface StoredOverride {
  projectId: number
  oldPersonId: string
  overridePersonId: string
}

/**
 * Everything an event engine holds, read back whole for `tally export` (moving a data dir onto the
 * scale stack and back): every event of every project with its person snapshot and groups, in
 * batches, and the current person overrides. What `EventStore.insertBatch` and
 * `PersonOverrideStore.write` take, so another engine can be filled from it.
 */
export interface EventDumpReads {
  events(): AsyncIterable<StoredEvent[]>
  overrides(): Promise<StoredOverride[]>
}
