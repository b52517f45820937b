import type { Logger } from 'pino'
import type { StoredEvent } from './event-store.ts'
import type { BatchDelivery } from '../queue/event-queue.ts'
import { classifyFailure, describeFailure, type FailureKind } from '../shared/classify-failure.ts'
import type { DeadLetter, DeadLetterStore } from './dead-letter-store.ts'
import type { IngestionCounters } from './ingestion-counters.ts'
import type { IngestionHealthTracker } from './ingestion-health.ts'
import { decodeQueuedEvent } from './queued-event.ts'
import type { BatchContext, BatchStep, StepResult } from './results.ts'
import { crashPoint } from '../shared/crash-points.ts'

/** A step between decoding and storage (person processing, group types...): event in, event out. */
export type EventStep = BatchStep<StoredEvent, StoredEvent>

export interface PipelineDeps {
  /** Steps run in order on each micro-batch after decoding; the composition root chooses them. */
  steps: readonly EventStep[]
  /** Writes what is left (see createStoreEventsStep). */
  store: BatchStep<StoredEvent, StoredEvent>
  /**
   * Steps that need the events stored first (the outbox of actions that notify). A redelivered batch
   * runs them again on every event, those the store already had included, so they must be idempotent.
   */
  afterStore?: readonly EventStep[]
  deadLetters: DeadLetterStore
  counters: IngestionCounters
  /** Told when a batch fails (ingestion is blocked) and when one succeeds again. */
  health?: IngestionHealthTracker
  /**
   * Deliveries of the same batch that may fail with an error that is neither transient nor known
   * to be about the data before the pipeline splits the batch to isolate the event at fault (default 3).
   */
  isolateAfterAttempts?: number
  logger?: Pick<Logger, 'warn' | 'error' | 'debug'>
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

/** Thrown to make the queue deliver the batch again, whole: a step failed for a reason not in the events. */
export class BatchFailedError extends Error {
  constructor(readonly step: string, readonly kind: FailureKind, options: { cause: unknown }) {
    super(`step ${step} failed (${kind}): ${describeFailure(options.cause)}`, options)
    this.name = 'BatchFailedError'
  }
}

/**
 * The ingestion pipeline, run on each micro-batch the queue delivers: decode the queued events,
 * run the steps in order, store. Outcomes are values: `drop` is counted, `dlq` goes to the
 * dead-letter store with its reason, `retry` makes the whole batch fail so the queue delivers it
 * again (storage dedupes by uuid, so a replay is harmless).
 *
 * A step that throws is judged by its error (classify-failure.ts). A transient failure (no disk
 * space, I/O error, store closed or unreachable) fails the whole batch: the queue delivers it again
 * after a backoff, and no event is dead-lettered for it. An error about the data, or an unknown one
 * that persisted for `isolateAfterAttempts` deliveries, splits the batch in halves, recursively, so
 * only the events the step still throws on alone go to the dead-letter store (a few runs of the step
 * per poison event, not one per event); a transient failure while splitting fails the batch again.
 */
export function createPipeline(deps: PipelineDeps): (messages: string[], delivery?: BatchDelivery) => Promise<void> {
  const now = deps.now ?? (() => new Date())
  const isolateAfter = deps.isolateAfterAttempts ?? 3
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

  return async function handleBatch(messages, delivery) {
    const attempt = delivery?.attempt ?? 1
    try {
      await processBatch(messages, attempt, { redelivered: delivery?.redelivered ?? false })
    } catch (err) {
      const reason = err instanceof BatchFailedError || err instanceof RetryBatchError ? err.message : describeFailure(err)
      deps.health?.blocked('event_store', reason, err instanceof Error && err.cause ? err.cause : err)
      deps.logger?.debug({ err, attempt, size: messages.length }, 'ingestion batch failed; it will be delivered again')
      throw err
    }
    deps.health?.recovered('event_store')
  }

  async function processBatch(messages: string[], attempt: number, context: BatchContext): Promise<void> {
    const letters: DeadLetter[] = []
    const drops: string[] = []
    let items: Item[] = messages.map((message) => ({ message, event: null }))
    const decoded = await runStep(decodeStep, messages, items, { letters, drops, attempt, context })
    items = decoded
    crashPoint('pipeline.after-decode')
    for (const step of [...deps.steps, deps.store, ...(deps.afterStore ?? [])]) {
      if (items.length === 0) break
      if (step === deps.store) crashPoint('pipeline.before-store')
      items = await runStep(step, items.map((i) => i.event!), items, { letters, drops, attempt, context })
      if (step === deps.store) crashPoint('pipeline.after-store')
    }
    if (letters.length > 0) {
      // A dead-letter write failure fails the batch: the events come back rather than vanish.
      await deps.deadLetters.insert(letters)
    }
    // Counted only once the batch has gone through: a retried batch is not counted twice.
    deps.counters.add('ok', 'stored', items.length)
    for (const reason of drops) deps.counters.add('drop', reason)
    for (const l of letters) deps.counters.add('dlq', l.reason)
    if (letters.length > 0) deps.counters.add('dlq', 'written', letters.length)
  }

  /** Runs one step; dead letters and drops are collected and only counted once the batch went through. */
  async function runStep<I>(
    step: BatchStep<I, StoredEvent>,
    inputs: I[],
    items: Item[],
    { letters, drops, attempt, context }: { letters: DeadLetter[]; drops: string[]; attempt: number; context: BatchContext },
  ): Promise<Item[]> {
    let results: StepResult<StoredEvent>[]
    try {
      results = await step.run(inputs, context)
    } catch (err) {
      const kind = classifyFailure(err)
      if (kind === 'transient' || (kind === 'unknown' && attempt < isolateAfter)) throw new BatchFailedError(step.name, kind, { cause: err })
      deps.logger?.warn({ err, step: step.name, size: inputs.length, kind, attempt }, 'pipeline step threw on a batch; splitting it to isolate the events at fault')
      results = await isolate(step, inputs, err, context)
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
          drops.push(r.reason)
          break
        case 'dlq':
          letters.push(toLetter(item, step.name, r.reason, r.error))
          break
        case 'retry':
          deps.counters.add('retry', r.reason)
          throw new RetryBatchError(step.name, r.reason, { cause: r.error })
      }
    }
    return out
  }

  /** Results for `inputs`, on which the step threw `err`: halves run separately until the throwing events stand alone. */
  async function isolate<I>(step: BatchStep<I, StoredEvent>, inputs: I[], err: unknown, context: BatchContext): Promise<StepResult<StoredEvent>[]> {
    if (inputs.length === 1) return [{ kind: 'dlq', reason: 'step_threw', error: err }]
    const mid = inputs.length >>> 1
    const out: StepResult<StoredEvent>[] = []
    for (const half of [inputs.slice(0, mid), inputs.slice(mid)]) {
      try {
        const r = await step.run(half, context)
        for (let i = 0; i < half.length; i++) out.push(r[i] ?? { kind: 'dlq', reason: 'step_returned_no_result' })
      } catch (halfErr) {
        if (classifyFailure(halfErr) === 'transient') throw new BatchFailedError(step.name, 'transient', { cause: halfErr })
        out.push(...(await isolate(step, half, halfErr, context)))
      }
    }
    return out
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
