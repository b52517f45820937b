import type { Logger } from 'pino'
import { createPipeline, type EventStep } from '../ingestion/pipeline.ts'
import type { IngestionCounters } from '../ingestion/ingestion-counters.ts'
import { createStoreEventsStep } from '../ingestion/steps/store-events-step.ts'
import type { DeadLetterStore } from '../ingestion/dead-letter-store.ts'
import type { IngestionHealthTracker } from '../ingestion/ingestion-health.ts'
import type { EventStore } from '../ingestion/event-store.ts'

/**
 * The ingestion pipeline as this deployment runs it: decode -> `steps` -> store. Person and group
 * processing plug in here as further steps (each one set-based over the micro-batch).
 */
export function createIngestionPipeline(deps: {
  events: EventStore
  deadLetters: DeadLetterStore
  counters: IngestionCounters
  health?: IngestionHealthTracker
  isolateAfterAttempts?: number
  logger: Logger
  steps?: EventStep[]
  /** Steps that need the events stored first (see PipelineDeps.afterStore). */
  afterStore?: EventStep[]
}) {
  const steps: EventStep[] = [...(deps.steps ?? [])]
  return createPipeline({
    steps,
    store: createStoreEventsStep(deps.events),
    afterStore: deps.afterStore,
    deadLetters: deps.deadLetters,
    counters: deps.counters,
    health: deps.health,
    isolateAfterAttempts: deps.isolateAfterAttempts,
    logger: deps.logger.child({ module: 'ingestion' }),
  })
}
