import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import { createDuckDbEventStore } from '../../src/storage/duckdb/duckdb-event-store.ts'
import { createDuckDbQueryEngine } from '../../src/storage/duckdb/duckdb-query-engine.ts'
import { openDuckDb } from '../../src/storage/duckdb/open-duckdb.ts'
import { eventSqlConformance } from './event-sql.conformance.ts'

// The event-SQL conformance suite on embedded DuckDB: a fresh in-memory database per test, opened
// through the app's migrations, written by the event store and read by the query engine.
eventSqlConformance('duckdb', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-duck-conformance-'))
  const duck = await openDuckDb(':memory:', MIGRATIONS.duckdb)
  const events = await createDuckDbEventStore(duck, { stagingDir: path.join(dir, 'staging') })
  const query = createDuckDbQueryEngine(() => duck.connect(), { poolSize: 1 })
  return {
    events,
    query,
    async close() {
      await events.close()
      await duck.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
})
