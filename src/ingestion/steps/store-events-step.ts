import type { EventStore, StoredEvent } from '../../modules/events/event-store.ts'
import { dlq, ok, retry, type BatchStep, type StepResult } from '../results.ts'

/**
 * Writes the batch to the event store in one insert (uuid-deduplicated). When the insert fails the
 * events are tried one by one: those that still fail go to the dead-letter store; when every one
 * fails the store itself is down, and the batch is retried later instead.
 */
export function createStoreEventsStep(store: EventStore): BatchStep<StoredEvent, StoredEvent> {
  return {
    name: 'store_events',
    async run(batch) {
      try {
        await store.insertBatch([...batch])
        return batch.map((e) => ok(e))
      } catch (batchErr) {
        const results: StepResult<StoredEvent>[] = []
        let failures = 0
        let lastErr: unknown = batchErr
        for (const e of batch) {
          try {
            await store.insertBatch([e])
            results.push(ok(e))
          } catch (err) {
            failures++
            lastErr = err
            results.push(dlq('store_failed', err))
          }
        }
        if (failures === batch.length) return batch.map(() => retry('event_store_unavailable', lastErr))
        return results
      }
    },
  }
}
