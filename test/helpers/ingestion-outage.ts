import { Writable } from 'node:stream'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import pino, { type Logger } from 'pino'
import type { EventStore, StoredEvent } from '../../src/ingestion/event-store.ts'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import { openClickHouse } from '../../src/storage/clickhouse/open-clickhouse.ts'

/** A pino logger at info whose JSON lines are kept in `lines` (parsed). */
export function capturedLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>)
      done()
    },
  })
  return { logger: pino({ level: 'info' }, stream), lines }
}

/**
 * The EventStore port as the worker sees it, with a switch: while `failWith` returns an error for a
 * batch, insertBatch throws it instead of writing (the real DuckDB store underneath otherwise).
 * Every call's batch size is recorded.
 */
export function switchableStore(failWith: (batch: StoredEvent[]) => Error | null) {
  const calls: number[] = []
  const wrap = (inner: EventStore): EventStore => ({
    async insertBatch(events) {
      calls.push(events.length)
      const err = failWith(events)
      if (err) throw err
      return inner.insertBatch(events)
    },
    close: () => inner.close(),
  })
  return { wrap, calls }
}

/** Rows of the dead-letter table, read after the app is closed: from the DuckDB file, or the app's ClickHouse database when given. */
export async function readDeadLetters(
  dataDir: string,
  clickhouseUrl?: string | null,
): Promise<Array<{ uuid: string | null; step: string; reason: string }>> {
  if (clickhouseUrl) {
    // The app's ClickHouse database (it outlives the closed app until the test file ends).
    const ch = await openClickHouse(clickhouseUrl, MIGRATIONS.clickhouse)
    try {
      return await ch.query<{ uuid: string | null; step: string; reason: string }>('SELECT uuid, step, reason FROM events_dead_letter ORDER BY id')
    } finally {
      await ch.close()
    }
  }
  const db = await DuckDBInstance.create(path.join(dataDir, 'events', 'events.duckdb'))
  try {
    const c = await db.connect()
    const rows = (await c.runAndReadAll('SELECT uuid::VARCHAR AS uuid, step, reason FROM events_dead_letter')).getRowObjects()
    c.closeSync()
    return rows as Array<{ uuid: string | null; step: string; reason: string }>
  } finally {
    db.closeSync()
  }
}

/** `n` events named `name` with fresh uuids (distinct ids from `distinctId(i)`). */
export function someEvents(name: string, n: number, distinctId: (i: number) => string = (i) => `user-${i % 7}`) {
  return Array.from({ length: n }, (_, i) => ({ event: name, distinct_id: distinctId(i), uuid: crypto.randomUUID(), properties: { i } }))
}
