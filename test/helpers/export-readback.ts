import { writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { mkdtemp, rm } from 'node:fs/promises'
import { DuckDBInstance } from '@duckdb/node-api'
import type { TestContext } from 'node:test'

/** An exported event read back by DuckDB, in the shape the comparison needs. */
export interface ReadBackRow {
  uuid: string
  event: string
  distinct_id: string
  /** Microseconds since the epoch. */
  ts: bigint
  person_id: string | null
  properties: unknown
  elements_chain: string
}

/**
 * Reads an export's bytes with DuckDB's own readers (read_parquet, read_csv, read_json), in file order.
 * CSV cannot tell an empty text from a missing one: both come back as ''.
 */
export async function readBackExport(t: TestContext, bytes: Buffer, format: 'parquet' | 'csv' | 'ndjson'): Promise<ReadBackRow[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-export-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, `events.${format}`)
  await writeFile(file, bytes)
  const db = await (await DuckDBInstance.create(':memory:')).connect()
  t.after(() => db.closeSync())
  const source = {
    parquet: `read_parquet('${file}')`,
    csv: `read_csv('${file}', header = true, all_varchar = true)`,
    // Properties stay JSON text, so that every key and value is compared, not DuckDB's inferred struct.
    ndjson: `read_json('${file}', format = 'newline_delimited', columns = {uuid: 'VARCHAR', event: 'VARCHAR', distinct_id: 'VARCHAR', timestamp: 'VARCHAR', person_id: 'VARCHAR', properties: 'JSON', elements_chain: 'VARCHAR'})`,
  }[format]
  const reader = await db.runAndReadAll(`SELECT uuid, event, distinct_id, epoch_us(timestamp::TIMESTAMPTZ) AS ts, person_id,
    properties::VARCHAR AS properties, coalesce(elements_chain, '') AS elements_chain FROM ${source}`)
  return reader.getRowObjects().map((r) => ({
    uuid: String(r.uuid),
    event: String(r.event),
    distinct_id: String(r.distinct_id),
    ts: BigInt(r.ts as bigint),
    person_id: r.person_id === null || r.person_id === '' ? null : String(r.person_id),
    properties: JSON.parse(String(r.properties)),
    elements_chain: String(r.elements_chain),
  }))
}
