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

/** Where dead letters go (DuckDB table embedded). Append-only; a batch is one write. */
export interface DeadLetterStore {
  insert(letters: DeadLetter[]): Promise<void>
}
