/** What one step of the sessions aggregate's compaction did. */
export interface SessionCompactionStep {
  /** Sessions whose partials were merged into one row each. */
  sessions: number
  /** Partial rows removed (the partials merged, less the one row each session keeps). */
  removedPartials: number
  /** Partial rows of the aggregate after the step (every project). */
  partials: number
  /** True when sessions with more than one partial may be left (call again). */
  more: boolean
}

/**
 * Merges the partials of the sessions aggregate (docs/web-analytics.md, "The sessions aggregate") in
 * place: each step takes at most `limit` sessions that have more than one partial and replaces their
 * partials by one row each, the merge a query does (least start's entry fields, greatest end's end
 * fields and distinct id, counts summed), in one transaction. The merge is associative, so a partial
 * stored meanwhile (by a batch the step did not see) is merged by the queries, or by a later step,
 * with the same answer. Queries answer the same before and after.
 */
export interface SessionCompactionStore {
  compactStep(limit: number): Promise<SessionCompactionStep>
}
