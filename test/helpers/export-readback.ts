import { writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { mkdtemp, rm } from 'node:fs/promises'
import { DuckDBInstance } from '@duckdb/node-api'
import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { TestApp } from './test-app.ts'
import { waitForEvents, type EventJson } from './capture-helpers.ts'

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

/** Events whose texts need quoting in CSV and escaping in JSON, nested properties, elements, days apart. */
export async function captureVariedEvents(app: TestApp, extra: Record<string, unknown>[] = []): Promise<void> {
  const batch = [...extra, ...Array.from({ length: 30 }, (_, i) => ({
    uuid: crypto.randomUUID(),
    event: ['$pageview', 'signed up', 'clicked, "big" button', 'multi\nline'][i % 4],
    distinct_id: i % 3 === 0 ? `user-${i % 5}` : `visitor "${i % 5}", é ✓`,
    timestamp: new Date(Date.UTC(2024, 4, 1 + (i % 6), 10, i, 7, i * 7)).toISOString(),
    properties: {
      plan: i % 2 ? 'pro' : 'free',
      n: i,
      big: 12345678901234,
      nested: { list: [1, 'two', { three: null }], quote: 'a "b", c' },
      ...(i % 4 === 1 ? { $elements: [{ tag_name: 'button', attr__class: 'buy now', $el_text: 'Buy, "now"', nth_child: 1, nth_of_type: 1 }] } : {}),
    },
  }))]
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
  await waitForEvents(app, batch.length)
}

/** Microseconds of the events API's `2024-05-01T12:00:00.123456+00:00`. */
export function micros(ts: string): bigint {
  return BigInt(Date.parse(`${ts.slice(0, 23)}Z`)) * 1000n + BigInt(ts.slice(23, 26))
}

/** The events API's view of an event, in the read-back shape (oldest first, as the export orders). */
export function expected(events: EventJson[]): ReadBackRow[] {
  return events
    .map((e) => ({
      uuid: e.id,
      event: e.event,
      distinct_id: e.distinct_id,
      ts: micros(e.timestamp),
      person_id: (e.person as { uuid?: string } | null)?.uuid ?? null,
      properties: e.properties,
      elements_chain: e.elements_chain,
    }))
    .sort((a, b) => (a.ts === b.ts ? (a.uuid < b.uuid ? -1 : 1) : a.ts < b.ts ? -1 : 1))
}

