import type { EventStore, StoredEvent } from '../../modules/events/event-store.ts'
import { DuckDBTimestampTZValue } from '@duckdb/node-api'
import type { DuckDb } from './open-duckdb.ts'

/**
 * EventStore on embedded DuckDB. A batch is appended to a staging table with the appender (fast),
 * then moved with one `INSERT OR IGNORE`, so an already-stored uuid is skipped (idempotency).
 */
export async function createDuckDbEventStore(db: DuckDb): Promise<EventStore> {
  const c = db.connection
  await c.run(`CREATE TEMP TABLE IF NOT EXISTS events_staging AS SELECT * FROM events LIMIT 0`)
  let chain: Promise<unknown> = Promise.resolve()

  async function insert(events: StoredEvent[]): Promise<{ inserted: number }> {
    if (events.length === 0) return { inserted: 0 }
    const appender = await c.createAppender('events_staging', 'main', 'temp')
    for (const e of events) {
      appender.appendVarchar(e.uuid)
      appender.appendInteger(e.projectId)
      appender.appendVarchar(e.event)
      appender.appendVarchar(e.distinctId)
      appender.appendVarchar(e.properties)
      appender.appendVarchar(e.elementsChain)
      appender.appendTimestampTZ(new DuckDBTimestampTZValue(BigInt(e.timestamp.getTime()) * 1000n))
      appender.appendTimestampTZ(new DuckDBTimestampTZValue(BigInt(e.createdAt.getTime()) * 1000n))
      if (e.personId) appender.appendVarchar(e.personId)
      else appender.appendNull()
      appender.appendNull()
      appender.endRow()
    }
    appender.flushSync()
    appender.closeSync()
    try {
      const r = await c.run(`INSERT OR IGNORE INTO events SELECT DISTINCT ON (uuid) * FROM events_staging`)
      return { inserted: Number(r.rowsChanged) }
    } finally {
      await c.run('DELETE FROM events_staging')
    }
  }

  return {
    // One connection: batches are serialised so the staging table is never shared.
    insertBatch(events) {
      const run = chain.then(() => insert(events))
      chain = run.catch(() => undefined)
      return run
    },
    async close() {
      await chain
    },
  }
}
