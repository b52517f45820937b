/** Where one stored block of a recording lies: a byte range of its session's file. */
export interface BlockLocation {
  projectId: number
  sessionId: string
  offset: number
  length: number
}

/**
 * Recording bytes, kept apart from the events: one append-only file per session holding its
 * blocks (each a gzip of JSON lines `[windowId, rrwebEvent]`), as PostHog's replay v2 keeps a
 * session's blocks in one object read by byte range. Embedded: files in the data dir.
 *
 * Invariants: `appendBlock` resolves only once the bytes are durable (fsync'd); appends to one
 * session are serialised; bytes of a failed or interrupted append are never part of a returned
 * location (a later append starts after them).
 */
export interface RecordingBlobStore {
  appendBlock(projectId: number, sessionId: string, data: Buffer): Promise<BlockLocation>
  /** The block's bytes, or null when the session's file is gone (deleted, expired). */
  readBlock(location: BlockLocation): Promise<Buffer | null>
  /** Removes the sessions' files (missing ones are fine). */
  deleteSessions(projectId: number, sessionIds: readonly string[]): Promise<void>
  /** Bytes of every session file (disk use, for the benchmark and metrics). */
  diskBytes(): Promise<number>
}
