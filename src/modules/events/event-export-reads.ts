import type { EventPropertyFilter, EventRow } from './event-read-store.ts'

/** Which events an export takes: the events API's filters, with an inclusive lower bound for the CLI's `--from`. */
export interface EventExportQuery {
  projectId: number
  event?: string
  distinctId?: string
  /** ISO-8601, inclusive (`--from`). */
  from?: string
  /** ISO-8601, exclusive (the events API's `after`). */
  after?: string
  /** ISO-8601, exclusive (the events API's `before`, the CLI's `--to`). */
  before?: string
  properties: EventPropertyFilter[]
}

/**
 * Event reads for an export: every matching event, oldest first (timestamp, then uuid), in batches, so
 * that a caller holds one batch at a time whatever the export's size. The engine's query runs only
 * while the caller iterates; aborting `signal` (or leaving the loop early) stops it in the engine.
 */
export interface EventExportReads {
  stream(query: EventExportQuery, signal: AbortSignal): AsyncIterable<EventRow[]>
}
