import type { Logger } from 'pino'
import type { StoredEvent } from '../modules/events/event-store.ts'
import type { DeadLetter, DeadLetterStore } from './dead-letter-store.ts'
import type { IngestionCounters } from './ingestion-counters.ts'
import { decodeQueuedEvent } from './queued-event.ts'
import type { BatchStep, StepResult } from './results.ts'

/** A step between decoding and storage (person processing, group types...): event in, event out. */
export type EventStep = BatchStep<StoredEvent, StoredEvent>

export interface PipelineDeps {
  /** Steps run in order on each micro-batch after decoding; the composition root chooses them. */
  steps: readonly EventStep[]
  /** The last step: writes what is left (see createStoreEventsStep). */
  store: BatchStep<StoredEvent, StoredEvent>
  deadLetters: DeadLetterStore
  counters: IngestionCounters
  logger?: Pick<Logger, 'warn' | 'error'>
  now?: () => Date
}

interface Item {
  message: string
  event: StoredEvent | null
}

/** Thrown to make the queue deliver the batch again: some step asked to retry. */
export class RetryBatchError extends Error {
  constructor(readonly step: string, readonly reason: string, options?: { cause?: unknown }) {
    super(`step ${step} asked to retry the batch: ${reason}`, options)
    this.name = 'RetryBatchError'
  }
}

/**
 * The ingestion pipeline, run on each micro-batch the queue delivers: decode the queued events,
 * run the steps in order, store. Outcomes are values: `drop` is counted, `dlq` goes to the
 * dead-letter store with its reason, `retry` makes the whole batch fail so the queue delivers it
 * again (storage dedupes by uuid, so a replay is harmless). A step that throws on a batch is run
 * again event by event, and only the events it still throws on go to the dead-letter store.
 */
export function createPipeline(deps: PipelineDeps): (messages: string[]) => Promise<void> {
  const now = deps.now ?? (() => new Date())
  const decodeStep: BatchStep<string, StoredEvent> = {
    name: 'decode',
    run: (batch) => batch.map((m): StepResult<StoredEvent> => {
      try {
        return { kind: 'ok', value: decodeQueuedEvent(m) }
      } catch (err) {
        return { kind: 'dlq', reason: 'unreadable_queue_message', error: err }
      }
    }),
  }

  return async function handleBatch(messages) {
    const letters: DeadLetter[] = []
    let items: Item[] = messages.map((message) => ({ message, event: null }))
    const decoded = await runStep(decodeStep, messages, items, letters)
    items = decoded
    for (const step of [...deps.steps, deps.store]) {
      if (items.length === 0) break
      items = await runStep(step, items.map((i) => i.event!), items, letters)
    }
    deps.counters.add('ok', 'stored', items.length)
    if (letters.length > 0) {
      // A dead-letter write failure fails the batch: the events come back rather than vanish.
      await deps.deadLetters.insert(letters)
      deps.counters.add('dlq', 'written', letters.length)
    }
  }

  async function runStep<I>(step: BatchStep<I, StoredEvent>, inputs: I[], items: Item[], letters: DeadLetter[]): Promise<Item[]> {
    let results: StepResult<StoredEvent>[]
    try {
      results = await step.run(inputs)
    } catch (err) {
      deps.logger?.warn({ err, step: step.name, size: inputs.length }, 'pipeline step threw on a batch; isolating events')
      results = await runOneByOne(step, inputs)
    }
    const out: Item[] = []
    for (let i = 0; i < items.length; i++) {
      const r = results[i] ?? { kind: 'dlq', reason: 'step_returned_no_result' }
      const item = items[i]!
      switch (r.kind) {
        case 'ok':
          out.push({ message: item.message, event: r.value })
          break
        case 'drop':
          deps.counters.add('drop', r.reason)
          break
        case 'dlq':
          deps.counters.add('dlq', r.reason)
          letters.push(toLetter(item, step.name, r.reason, r.error))
          break
        case 'retry':
          deps.counters.add('retry', r.reason)
          throw new RetryBatchError(step.name, r.reason, { cause: r.error })
      }
    }
    return out
  }

  async function runOneByOne<I>(step: BatchStep<I, StoredEvent>, inputs: I[]): Promise<StepResult<StoredEvent>[]> {
    const results: StepResult<StoredEvent>[] = []
    for (const input of inputs) {
      try {
        results.push((await step.run([input]))[0] ?? { kind: 'dlq', reason: 'step_returned_no_result' })
      } catch (err) {
        results.push({ kind: 'dlq', reason: 'step_threw', error: err })
      }
    }
    return results
  }

  function toLetter(item: Item, step: string, reason: string, error: unknown): DeadLetter {
    return {
      payload: item.message,
      uuid: item.event?.uuid ?? null,
      projectId: item.event?.projectId ?? null,
      step,
      reason,
      error: error === undefined ? null : error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error),
      failedAt: now(),
    }
  }
}
