/** Counts of ingestion outcomes by `outcome:reason` (e.g. `drop:missing_distinct_id`, `ok:stored`). */
export interface IngestionCounters {
  add(outcome: string, reason: string, n?: number): void
  snapshot(): Record<string, number>
}

export function createIngestionCounters(): IngestionCounters {
  const counts = new Map<string, number>()
  return {
    add(outcome, reason, n = 1) {
      const key = `${outcome}:${reason}`
      counts.set(key, (counts.get(key) ?? 0) + n)
    },
    snapshot: () => Object.fromEntries(counts),
  }
}
