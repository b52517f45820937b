import type { EventStore, StoredEvent } from '../event-store.ts'
import { ok, type BatchStep } from '../results.ts'

/**
 * Writes the batch to the event store in one insert (uuid-deduplicated). A failure is thrown as it
 * is: the pipeline tells a store that cannot write now (retry the whole batch) from an event the
 * store refuses (split the batch to dead-letter only that event); see pipeline.ts.
 */
export function createStoreEventsStep(store: EventStore): BatchStep<StoredEvent, StoredEvent> {
  return {
    name: 'store_events',
    async run(batch, context) {
      await store.insertBatch([...batch], { redelivered: context?.redelivered ?? false })
      return batch.map((e) => ok(e))
    },
  }
}
