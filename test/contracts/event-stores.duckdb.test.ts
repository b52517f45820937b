import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import type { DeadLetter } from '../../src/ingestion/dead-letter-store.ts'
import { createDuckDbDeadLetterStore } from '../../src/storage/duckdb/duckdb-dead-letter-store.ts'
import { createDuckDbEventReadStore } from '../../src/storage/duckdb/duckdb-event-read-store.ts'
import { createDuckDbEventStore } from '../../src/storage/duckdb/duckdb-event-store.ts'
import { openDuckDb } from '../../src/storage/duckdb/open-duckdb.ts'
import { deadLetterFromRow, deadLetterStoreContract } from './dead-letter-store.contract.ts'
import { eventStoreContract } from './event-store.contract.ts'

// A zone with an odd offset: a timestamp that is read or written as local time shows up as a moved
// instant (DuckDB takes its session zone from the process's).
process.env.TZ = 'Asia/Kathmandu'

// The event store, its read side and the dead-letter store on embedded DuckDB: a fresh in-memory
// database per test (cheap), opened through the same migrations as the app.
async function openDuck() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-duck-contract-'))
  const duck = await openDuckDb(':memory:', MIGRATIONS.duckdb)
  return {
    duck,
    dir,
    async close() {
      await duck.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

eventStoreContract('duckdb', async () => {
  const { duck, dir, close } = await openDuck()
  const events = await createDuckDbEventStore(duck, { stagingDir: path.join(dir, 'staging') })
  const reads = createDuckDbEventReadStore(await duck.connect())
  return {
    port: { events, reads },
    async close() {
      await events.close()
      await close()
    },
  }
})

deadLetterStoreContract('duckdb', async () => {
  const { duck, close } = await openDuck()
  const letters = createDuckDbDeadLetterStore(await duck.connect())
  async function readAll(): Promise<DeadLetter[]> {
    const reader = await duck.connection.runAndReadAll(
      `SELECT epoch_ms(failed_at) AS failed_ms, uuid, project_id, step, reason, error, payload FROM events_dead_letter`,
    )
    return reader.getRowObjects().map(deadLetterFromRow)
  }
  return { port: { letters, readAll }, close }
})
