import { randomUUID } from 'node:crypto'
import type { EventExportQuery, EventExportReads } from '../../modules/events/event-export-reads.ts'
import type { EventRow } from '../../modules/events/event-read-store.ts'
import type { ClickHouse } from './open-clickhouse.ts'
import { EVENT_COLUMNS, eventWhereSql, toEventRow, type EventColumnsRow } from './clickhouse-event-read-store.ts'

/** Rows handed to the caller at once, gathered from the HTTP stream's pieces. */
const BATCH_ROWS = 8_192

/**
 * Export reads on ClickHouse: one streamed SELECT (JSONEachRow) per export, oldest first, under a
 * query id of its own (`tally-export-…`), so that a caller who stops early or aborts kills the query
 * in the server (KILL QUERY), not only the HTTP connection.
 */
export function createClickHouseEventExportReads(ch: ClickHouse): EventExportReads {
  return {
    async *stream(q: EventExportQuery, signal: AbortSignal): AsyncIterable<EventRow[]> {
      signal.throwIfAborted()
      const where = eventWhereSql(q)
      const sql = `SELECT ${EVENT_COLUMNS} FROM events AS e WHERE ${where.join(' AND ')} ORDER BY timestamp_ms, uuid_text`
      let batch: EventRow[] = []
      for await (const rows of ch.stream<EventColumnsRow>(sql, { queryId: `tally-export-${randomUUID()}`, signal })) {
        for (const r of rows) batch.push(toEventRow(r))
        if (batch.length >= BATCH_ROWS) {
          yield batch
          batch = []
        }
      }
      if (batch.length > 0) yield batch
    },
  }
}
