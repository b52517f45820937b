import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api'
import type { EventExportQuery, EventExportReads } from '../../modules/events/event-export-reads.ts'
import type { EventRow } from '../../modules/events/event-read-store.ts'
import { duckDbEventDialect as d } from './duckdb-event-dialect.ts'
import { EVENT_COLUMNS, eventWhereSql, toEventRow } from './duckdb-event-read-store.ts'

/** Rows handed to the caller at once: a few of DuckDB's 2,048-row chunks. */
const BATCH_ROWS = 8_192

/**
 * Export reads on DuckDB: each export streams its query on a connection of its own (a streaming
 * result is invalidated by any other statement on its connection), chunk by chunk, so only the
 * chunk being read is materialised (the ORDER BY's sort spills past DuckDB's memory limit). Aborting
 * the signal interrupts the query; the connection is closed when the stream ends either way.
 */
export function createDuckDbEventExportReads(db: {
  connect(): Promise<DuckDBConnection>
  disconnect(c: DuckDBConnection): void
}): EventExportReads {
  return {
    async *stream(q: EventExportQuery, signal: AbortSignal): AsyncIterable<EventRow[]> {
      signal.throwIfAborted()
      const params = d.createParams()
      const where = eventWhereSql(q, params)
      const c = await db.connect()
      const interrupt = () => c.interrupt()
      signal.addEventListener('abort', interrupt, { once: true })
      try {
        const result = await c.stream(
          `SELECT ${EVENT_COLUMNS} FROM events WHERE ${where.join(' AND ')} ORDER BY timestamp, uuid`,
          params.values as DuckDBValue[],
        )
        const names = result.columnNames()
        let batch: EventRow[] = []
        for (;;) {
          signal.throwIfAborted()
          const chunk = await result.fetchChunk()
          if (!chunk || chunk.rowCount === 0) break
          for (const r of chunk.getRowObjects(names)) batch.push(toEventRow(r))
          if (batch.length >= BATCH_ROWS) {
            yield batch
            batch = []
          }
        }
        if (batch.length > 0) yield batch
      } finally {
        signal.removeEventListener('abort', interrupt)
        db.disconnect(c)
      }
    },
  }
}
