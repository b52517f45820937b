// Test support for the action SQL tests: a fresh in-memory
// DuckDB with the events migrations, and an insert of events written the way the event store
// writes them (properties as JSON text, elements as the chain string).
import { randomUUID } from 'node:crypto'
import type { DuckDBValue } from '@duckdb/node-api'
import { openDuckDb, type DuckDb } from '../../src/storage/duckdb/open-duckdb.ts'
import { fillMaterializedSql } from '../../src/storage/duckdb/materialized-properties.ts'

export interface TestEventRow {
  uuid?: string
  projectId?: number
  event: string
  distinctId?: string
  properties: Record<string, unknown>
  elementsChain?: string
  timestamp?: Date
  personProperties?: Record<string, unknown> | null
}

const MIGRATIONS = new URL('../../migrations/events/duckdb', import.meta.url).pathname

/** A fresh DuckDB in memory with the events schema; closed by the caller. */
export function openTestEventsDb(): Promise<DuckDb> {
  return openDuckDb(':memory:', MIGRATIONS)
}

/** Inserts rows (in chunks, all values bound) and returns their uuids in order. */
export async function insertTestEvents(db: DuckDb, rows: readonly TestEventRow[]): Promise<string[]> {
  const uuids: string[] = []
  for (let start = 0; start < rows.length; start += 200) {
    const values: DuckDBValue[] = []
    const tuples: string[] = []
    for (const row of rows.slice(start, start + 200)) {
      const uuid = row.uuid ?? randomUUID()
      uuids.push(uuid)
      const ts = (row.timestamp ?? new Date('2026-01-01T00:00:00Z')).toISOString()
      const person = row.personProperties ? JSON.stringify(row.personProperties) : null
      const base = values.length
      values.push(uuid, row.projectId ?? 1, row.event, row.distinctId ?? 'd', JSON.stringify(row.properties), row.elementsChain ?? '', ts)
      const p = (i: number): string => `$${base + i}`
      tuples.push(`(${p(1)}::UUID, ${p(2)}::INTEGER, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}::TIMESTAMPTZ, ${p(7)}::TIMESTAMPTZ, NULL, ${person === null ? 'NULL' : `${p(8)}`})`)
      if (person !== null) values.push(person)
    }
    await db.connection.run(
      `INSERT INTO events (uuid, project_id, event, distinct_id, properties, elements_chain, timestamp, created_at, person_id, person_properties) VALUES ${tuples.join(', ')}`,
      values,
    )
  }
  // As the event store would have: the materialized property columns.
  await db.connection.run(fillMaterializedSql())
  return uuids
}
