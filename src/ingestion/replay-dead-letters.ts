import type { EventQueue } from '../queue/event-queue.ts'
import type { DeadLetterStore } from './dead-letter-store.ts'

/** How many letters one replay reads and publishes at a time. */
const CHUNK = 1000

/**
 * Puts pending dead letters back on the queue, the payload as it was delivered, so the pipeline
 * processes them again; then marks them replayed. At least once: a crash between the publish and the
 * mark replays them again, and the event store drops a uuid it already has. A letter that fails
 * again becomes a new dead letter. `projectId` limits the replay to one project, `ids` to these letters.
 */
export async function replayDeadLetters(
  deps: { deadLetters: DeadLetterStore; queue: Pick<EventQueue, 'publish'>; now?: () => Date },
  scope: { projectId?: number; ids?: readonly number[] } = {},
): Promise<{ replayed: number }> {
  const now = deps.now ?? (() => new Date())
  let replayed = 0
  for (;;) {
    // Always the first page: what was replayed is no longer pending.
    const { rows } = await deps.deadLetters.list({ ...scope, pendingOnly: true, limit: CHUNK, offset: 0 })
    if (rows.length === 0) return { replayed }
    const oldestFirst = [...rows].reverse()
    await deps.queue.publish(oldestFirst.map((l) => l.payload))
    await deps.deadLetters.markReplayed(oldestFirst.map((l) => l.id), now())
    replayed += rows.length
  }
}
