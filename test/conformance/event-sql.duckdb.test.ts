import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import type { DeadLetter } from '../../src/ingestion/dead-letter-store.ts'
import { createDuckDbDeadLetterStore } from '../../src/storage/duckdb/duckdb-dead-letter-store.ts'
import { createDuckDbEventReadStore } from '../../src/storage/duckdb/duckdb-event-read-store.ts'
import { createDuckDbEventStore } from '../../src/storage/duckdb/duckdb-event-store.ts'
import { createDuckDbQueryEngine } from '../../src/storage/duckdb/duckdb-query-engine.ts'
import { openDuckDb } from '../../src/storage/duckdb/open-duckdb.ts'
import { deadLetterFromRow } from '../contracts/dead-letter-store.contract.ts'
import { eventSqlConformance } from './event-sql.conformance.ts'

// A zone with an odd offset: a timestamp that is read or written as local time shows up as a moved
// instant (DuckDB takes its session zone from the process's).
process.env.TZ = 'Asia/Kathmandu'

// The event-SQL conformance suite and the event-side store contracts on embedded DuckDB: a fresh
// in-memory database per test (cheap), opened through the app's migrations.
async function openDuck() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-duck-conformance-'))
  const duck = await openDuckDb(':memory:', MIGRATIONS.duckdb)
  return {
    duck,
    stagingDir: path.join(dir, 'staging'),
    async close() {
      await duck.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

eventSqlConformance('duckdb', async () => {
  const { duck, stagingDir, close } = await openDuck()
  const events = await createDuckDbEventStore(duck, { stagingDir })
  const query = createDuckDbQueryEngine(() => duck.connect(), { poolSize: 1 })
  return {
    events,
    query,
    async close() {
      await events.close()
      await close()
    },
  }
}, {
  contracts: {
    async events() {
      const { duck, stagingDir, close } = await openDuck()
      const events = await createDuckDbEventStore(duck, { stagingDir })
      const reads = createDuckDbEventReadStore(await duck.connect())
      return { port: { events, reads }, close: () => events.close().then(close) }
    },
    async deadLetters() {
      const { duck, close } = await openDuck()
      const letters = createDuckDbDeadLetterStore(await duck.connect())
      async function readAll(): Promise<DeadLetter[]> {
        const reader = await duck.connection.runAndReadAll(
          `SELECT epoch_ms(failed_at) AS failed_ms, uuid, project_id, step, reason, error, payload FROM events_dead_letter`,
        )
        return reader.getRowObjects().map(deadLetterFromRow)
      }
      return { port: { letters, readAll }, close }
    },
  },
})
