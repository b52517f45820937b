/**
 * A change another process must hear about, so that what it caches stays right: the decide read
 * model of a project (flags, cohorts, group types), persons cached for /decide, or a project's keys.
 */
export type Change =
  | { kind: 'flags'; projectId: number }
  | { kind: 'persons'; projectId: number; distinctIds: string[] | null }
  | { kind: 'project'; projectId: number }
  | { kind: 'personal-keys'; userId: number }

/**
 * Cache invalidation across processes (`tally serve --role`): each process applies its own changes
 * locally and publishes them; the others apply what they hear. Embedded (one process) it only
 * delivers locally; at scale it is PostgreSQL LISTEN/NOTIFY (`storage/postgres/pg-change-bus.ts`).
 * Delivery is best effort: after a lost connection a process hears `{ kind: 'lost' }` and must drop
 * everything it caches from others' writes.
 */
export interface ChangeBus {
  publish(change: Change): void
  /** `lost`: notifications may have been missed (the listener reconnected). */
  subscribe(fn: (change: Change | { kind: 'lost' }) => void): void
  close(): Promise<void>
}

/** The bus of a single process: there is nobody else to tell. */
export function localChangeBus(): ChangeBus {
  return { publish() {}, subscribe() {}, close: async () => {} }
}
