/** An event the pipeline could not process, kept with the reason so that it can be replayed. */
export interface DeadLetter {
  /** The queue message as it was delivered (a queued event line). */
  payload: string
  uuid: string | null
  projectId: number | null
  /** The step that gave up. */
  step: string
  reason: string
  /** The error message (and stack) when the step threw. */
  error: string | null
  failedAt: Date
}

/** A dead letter as stored: its id, and when it was replayed (null while pending). */
export interface StoredDeadLetter extends DeadLetter {
  id: number
  replayedAt: Date | null
}

export interface DeadLetterQuery {
  /** Only this project's letters (a letter whose project could not be read has none). */
  projectId?: number
  /** Only letters not replayed yet. */
  pendingOnly?: boolean
  /** Only these ids. */
  ids?: readonly number[]
  limit: number
  offset: number
}

/**
 * Where dead letters go (DuckDB table embedded). Letters are appended, a batch in one write; they are
 * never deleted, only marked replayed.
 */
export interface DeadLetterStore {
  insert(letters: DeadLetter[]): Promise<void>
  /** Newest first, and how many match. */
  list(query: DeadLetterQuery): Promise<{ count: number; rows: StoredDeadLetter[] }>
  /** Records that these letters went back on the queue. */
  markReplayed(ids: readonly number[], at: Date): Promise<void>
}
