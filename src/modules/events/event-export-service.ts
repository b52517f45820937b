import type { EventExportQuery, EventExportReads } from './event-export-reads.ts'
import { encodeEventExport, type ExportFormat } from './event-export-formats.ts'

export interface EventExportStats {
  /** Exports streaming now. */
  running: number
  /** Events written by finished or running exports since start. */
  rows: number
  /** Exports stopped before their end (the client went away, or a failure). */
  cancelled: number
}

/**
 * Event exports (the API's and the CLI's): the engine's rows encoded as they arrive. The bytes are an
 * async generator: whoever consumes it sets the pace (the HTTP socket's backpressure, a file's writes),
 * and `signal` stops the engine's query at once, even inside a long sort.
 */
export function createEventExportService(reads: EventExportReads) {
  const stats: EventExportStats = { running: 0, rows: 0, cancelled: 0 }
  return {
    stats: (): EventExportStats => ({ ...stats }),
    async *export(query: EventExportQuery, format: ExportFormat, signal: AbortSignal): AsyncGenerator<Uint8Array> {
      stats.running++
      let finished = false
      async function* counted() {
        for await (const batch of reads.stream(query, signal)) {
          stats.rows += batch.length
          yield batch
        }
      }
      try {
        yield* encodeEventExport(counted(), format)
        finished = true
      } finally {
        stats.running--
        if (!finished) stats.cancelled++
      }
    },
  }
}

export type EventExportService = ReturnType<typeof createEventExportService>
