/**
 * What a pipeline step decided for one event, as a value (PostHog's ingestion pipeline results):
 * go on with `value`; drop it on purpose (counted by reason); park it in the dead-letter store
 * (a bug or unreadable data, kept with the reason to be replayed); or retry the whole batch later.
 */
export type StepResult<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'drop'; reason: string }
  | { kind: 'dlq'; reason: string; error?: unknown }
  | { kind: 'retry'; reason: string; error?: unknown }

export const ok = <T>(value: T): StepResult<T> => ({ kind: 'ok', value })
export const drop = <T = never>(reason: string): StepResult<T> => ({ kind: 'drop', reason })
export const dlq = <T = never>(reason: string, error?: unknown): StepResult<T> => ({ kind: 'dlq', reason, error })
export const retry = <T = never>(reason: string, error?: unknown): StepResult<T> => ({ kind: 'retry', reason, error })

/**
 * One step over a micro-batch: returns one result per input, in the same order. Steps do their I/O
 * set-based (one query for the whole batch), never per event.
 */
export interface BatchStep<I, O> {
  readonly name: string
  run(batch: readonly I[], context?: BatchContext): Promise<StepResult<O>[]> | StepResult<O>[]
}

/** What a step may need to know about the delivery of its batch. */
export interface BatchContext {
  /** Some event of the batch was delivered before, possibly to another worker (see BatchDelivery). */
  redelivered: boolean
}
