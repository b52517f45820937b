import type { BlockLocation } from './recording-blob-store.ts'
import type { RecordingBlock } from './recording-block.ts'

/** A recorded session's metadata row (PostHog's session_replay_events summary). */
export interface RecordingMeta {
  projectId: number
  sessionId: string
  distinctId: string
  startTime: Date
  endTime: Date
  durationSeconds: number
  activeSeconds: number
  clickCount: number
  keypressCount: number
  mouseActivityCount: number
  consoleLogCount: number
  consoleWarnCount: number
  consoleErrorCount: number
  firstUrl: string | null
  sizeBytes: number
  /** The person of `distinctId` now (resolved through the distinct ids at read time), or null. */
  personUuid: string | null
}

/** A stored block as the snapshots API lists it. */
export interface StoredBlock extends BlockLocation {
  startTime: Date
  endTime: Date
}

export type RecordingOrder = 'start_time' | 'duration' | 'active_seconds' | 'click_count' | 'console_error_count'
export type NumericKey = 'duration' | 'active_seconds' | 'click_count' | 'keypress_count' | 'console_error_count'

/** The list filters, already checked (see recording-list-schemas.ts). */
export interface RecordingFilter {
  dateFrom: Date | null
  dateTo: Date | null
  personUuid: string | null
  distinctIds: string[] | null
  /** Only these sessions (from the events-performed filter or `session_ids`). */
  sessionIds: string[] | null
  /** `having_predicates`: numeric comparisons on the row. */
  predicates: { key: NumericKey; operator: 'gt' | 'lt' | 'exact'; value: number }[]
  order: RecordingOrder
  limit: number
  offset: number
}

/**
 * Recording metadata (MetaStore): block rows and the session rows recomputed from them.
 * `insertBlocks` is idempotent (a block is keyed by its byte range, and by its content digest when it
 * has one: a batch the SDK sent twice counts once) and set-based (one statement per batch whatever its size). A session is only ever served to its own project.
 */
export interface RecordingStore {
  insertBlocks(blocks: readonly RecordingBlock[]): Promise<void>
  list(projectId: number, filter: RecordingFilter): Promise<{ results: RecordingMeta[]; hasNext: boolean }>
  get(projectId: number, sessionId: string): Promise<RecordingMeta | null>
  /** The session's blocks in time order (the blob keys are their positions), or a page of them. */
  blocks(projectId: number, sessionId: string, page?: { offset: number; limit: number }): Promise<StoredBlock[]>
  /** Removes the sessions' rows; returns the ids that existed. */
  deleteSessions(projectId: number, sessionIds: readonly string[]): Promise<string[]>
  /** Sessions recorded by any of these distinct ids. */
  sessionsOfDistinctIds(projectId: number, distinctIds: readonly string[]): Promise<string[]>
  /** Up to `limit` sessions that ended before their project's retention (days) counted back from `now`. */
  expired(now: Date, limit: number): Promise<{ projectId: number; sessionId: string }[]>
}
