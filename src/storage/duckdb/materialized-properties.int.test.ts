import assert from 'node:assert/strict'
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { MIGRATIONS } from '../../app/create-adapters.ts'
import { createDuckDbEventStore } from './duckdb-event-store.ts'
import { MATERIALIZED_PROPERTIES, NONSTRING_KEYS } from './materialized-properties.ts'
import { openDuckDb } from './open-duckdb.ts'

// Values a client can send for a materialized key: the column must hold exactly what
// json_extract_string reads from the properties (readers trust it instead of the JSON), NULL when
// absent or null, and mat_nonstring must mark the keys holding something other than a string,
// whichever way the row was written.
const VALUES: unknown[] = [
  'https://a.com/x?q="quoted"&t=\t', '', 'ünïcödé ✓ 𝄞', 'back\\slash', 'line\nbreak', 42, 0, true, false, null, { nested: 'x' }, ['x'], undefined,
]

function propertiesOf(i: number): Record<string, unknown> {
  const props: Record<string, unknown> = { other: i }
  for (const [k] of MATERIALIZED_PROPERTIES) {
    const v = VALUES[(i + k.length) % VALUES.length]
    if (v !== undefined) props[k] = v
  }
  return props
}

async function columnsOf(db: Awaited<ReturnType<typeof openDuckDb>>): Promise<Map<string, Record<string, unknown>>> {
  const reader = await db.connection.runAndReadAll(`SELECT uuid::VARCHAR AS uuid, ${[...MATERIALIZED_PROPERTIES.values()].join(', ')}, mat_nonstring FROM events`)
  return new Map(reader.getRowObjectsJson().map((r) => [String(r.uuid), r as Record<string, unknown>]))
}

function assertColumns(rows: Map<string, Record<string, unknown>>, expected: Map<string, Record<string, unknown>>) {
  assert.equal(rows.size, expected.size)
  for (const [uuid, props] of expected) {
    let nonString = 0
    for (const [i, [key, column]] of [...MATERIALIZED_PROPERTIES].entries()) {
      const v = props[key]
      const text = v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v)
      assert.equal(rows.get(uuid)![column], text, `${key} = ${JSON.stringify(v)}`)
      if (text !== null && typeof v !== 'string' && i < NONSTRING_KEYS) nonString |= 1 << i
    }
    assert.equal(Number(rows.get(uuid)!.mat_nonstring), nonString, `mat_nonstring of ${JSON.stringify(props)}`)
  }
}

test('the event store fills the materialized columns with json_extract_string\'s text, and the migrations fill older rows the same way', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-mat-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const expected = new Map<string, Record<string, unknown>>()
  const events = VALUES.map((_, i) => {
    const uuid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`
    expected.set(uuid, propertiesOf(i))
    return {
      uuid, projectId: 1, event: '$pageview', distinctId: 'd', properties: JSON.stringify(propertiesOf(i)), elementsChain: '',
      timestamp: new Date('2026-01-01T00:00:00Z'), createdAt: new Date('2026-01-01T00:00:00Z'), personId: null, personProperties: '{}',
    }
  })

  // Written by the event store.
  const db = await openDuckDb(path.join(dir, 'new.duckdb'), MIGRATIONS.duckdb)
  const store = await createDuckDbEventStore(db, { stagingDir: path.join(dir, 'staging') })
  await store.insertBatch(events)
  await store.close()
  assertColumns(await columnsOf(db), expected)
  await db.close()

  // Written before the columns existed (the migrations before 0005), or while they held strings
  // only (before 0006), then migrated.
  const files = (await readdir(MIGRATIONS.duckdb)).sort()
  for (const cut of ['0005-', '0006-']) {
    const older = path.join(dir, `before-${cut}`)
    const at = files.findIndex((f) => f.startsWith(cut))
    assert.ok(at > 0, `migration ${cut} is present`)
    await cp(MIGRATIONS.duckdb, older, { recursive: true, filter: (src) => !files.slice(at).some((f) => src.endsWith(f)) })
    const file = path.join(dir, `old-${cut}.duckdb`)
    const old = await openDuckDb(file, older)
    for (const e of events) {
      await old.connection.run(`INSERT INTO events (uuid, project_id, event, distinct_id, properties, timestamp, created_at) VALUES ($1::UUID, 1, '$pageview', 'd', $2, now(), now())`, [e.uuid, e.properties])
    }
    // Rows of the string-only era: 0005 filled strings only (checked: a number is NULL there).
    if (cut === '0006-') {
      const nulls = await old.connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM events WHERE mat_browser IS NULL AND json_type(properties, '/$browser') NOT IN ('VARCHAR', 'NULL')`)
      assert.ok(Number(nulls.getRowObjects()[0]!.n) > 0, 'some rows hold a non-string browser the old migration left NULL')
    }
    await old.close()
    const migrated = await openDuckDb(file, MIGRATIONS.duckdb)
    assertColumns(await columnsOf(migrated), expected)
    await migrated.close()
  }
})

test('migration 0010 fills mat_session_id of older rows with the $session_id text', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-mat-sid-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const files = (await readdir(MIGRATIONS.duckdb)).sort()
  const at = files.findIndex((f) => f.startsWith('0010-'))
  const older = path.join(dir, 'before-0010')
  await cp(MIGRATIONS.duckdb, older, { recursive: true, filter: (src) => !files.slice(at).some((f) => src.endsWith(f)) })
  const file = path.join(dir, 'old.duckdb')
  const old = await openDuckDb(file, older)
  const rows: Array<[string, unknown]> = [['0190a5d1-0000-7000-8000-000000000001', 's-1'], ['0190a5d1-0000-7000-8000-000000000002', 42], ['0190a5d1-0000-7000-8000-000000000003', undefined]]
  for (const [uuid, sid] of rows) {
    await old.connection.run(`INSERT INTO events (uuid, project_id, event, distinct_id, properties, timestamp, created_at) VALUES ($1::UUID, 1, '$pageview', 'd', $2, now(), now())`, [uuid, JSON.stringify(sid === undefined ? {} : { $session_id: sid })])
  }
  await old.close()
  const migrated = await openDuckDb(file, MIGRATIONS.duckdb)
  const got = (await migrated.connection.runAndReadAll('SELECT uuid::VARCHAR AS uuid, mat_session_id FROM events ORDER BY uuid')).getRowObjectsJson()
  assert.deepEqual(got.map((r) => r.mat_session_id), ['s-1', '42', null])
  await migrated.close()
})
