/** What one step of a project's retention removed. */
export interface RetentionStep {
  /** Events deleted (on ClickHouse: counted just before the mutation or the dropped partitions). */
  events: number
  deadLetters: number
  /**
   * Person overrides removed because no event of the project is stored under their old person id any
   * more (its events all past retention): queries never look them up again. Done on a project's last step.
   */
  personOverrides: number
  /** True when the project may still hold events older than the cut-off (call again). */
  more: boolean
}

/**
 * Deletes a project's events older than a cut-off from the event store, in bounded steps, with the
 * dead letters of that age and, once the old events are gone, the person overrides they needed. DuckDB deletes at most `limit` events a call; ClickHouse drops whole
 * months where only this project's old events live and deletes the rest by one mutation.
 */
export interface EventRetentionStore {
  deleteBefore(projectId: number, before: Date, limit: number): Promise<RetentionStep>
}
