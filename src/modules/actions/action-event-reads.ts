import type { ActionStep } from './action-types.ts'

/**
 * What actions read of the event store: matching runs inside the store (DuckDB now, ClickHouse
 * later), never by loading events into JavaScript.
 */
export interface ActionEventReads {
  /** Events of the project in `[after, before)` that match any of the steps. */
  countActionMatches(projectId: number, steps: readonly ActionStep[], range: { after?: Date; before?: Date }): Promise<number>
  /**
   * A page of the distinct persons (uuids, merges resolved through the person overrides) with an
   * event in `[after, before)` that matches any of the steps, sorted by uuid; `hasMore` when a
   * further page exists.
   */
  actionPersons(
    projectId: number,
    steps: readonly ActionStep[],
    query: { after?: Date; before?: Date; limit: number; offset: number },
  ): Promise<{ personIds: string[]; hasMore: boolean }>
}
