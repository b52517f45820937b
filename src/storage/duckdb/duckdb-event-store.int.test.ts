import assert from 'node:assert/strict'
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test, type TestContext } from 'node:test'
import { MIGRATIONS } from '../../app/create-adapters.ts'
import type { StoredEvent } from '../../ingestion/event-store.ts'
import { anEvent } from '../../../test/contracts/builders.ts'
import { createDuckDbEventStore } from './duckdb-event-store.ts'
import { openDuckDb, type DuckDb } from './open-duckdb.ts'

const uuidAt = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-duck-store-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** The database and event store in `dir`, opened as the app opens them; `close` closes both. */
async function open(dir: string, opts: { dedupWindow?: number; migrations?: string } = {}) {
  const db = await openDuckDb(path.join(dir, 'events.duckdb'), opts.migrations ?? MIGRATIONS.duckdb)
  const store = await createDuckDbEventStore(db, { stagingDir: path.join(dir, 'staging'), dedupWindow: opts.dedupWindow })
  return {
    db,
    store,
    async close() {
      await store.close()
      await db.close()
    },
  }
}

async function countOf(db: DuckDb, uuid: string): Promise<number> {
  const r = await db.connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM events WHERE uuid = '${uuid}'::UUID`)
  return Number(r.getRowObjects()[0]!.n)
}

const event = (n: number, over: Partial<StoredEvent> = {}) => anEvent({ uuid: uuidAt(n), createdAt: new Date(Date.now() - 1000), ...over })

test('a uuid stored before a restart is not stored again after it', async (t) => {
  const dir = await tempDir(t)
  const first = await open(dir)
  assert.deepEqual(await first.store.insertBatch([event(1), event(2)]), { inserted: 2 })
  await first.close()

  const again = await open(dir)
  t.after(() => again.close())
  // The queue delivering the last batch again after a restart: nothing new, and a new event beside it is stored.
  assert.deepEqual(await again.store.insertBatch([event(1), event(2, { event: 'changed' }), event(3)]), { inserted: 1 })
  assert.equal(await countOf(again.db, uuidAt(1)), 1)
  assert.equal(await countOf(again.db, uuidAt(2)), 1)
  assert.equal(await countOf(again.db, uuidAt(3)), 1)
  // A batch of nothing but stored uuids, one twice.
  assert.deepEqual(await again.store.insertBatch([event(1), event(1), event(3)]), { inserted: 0 })
})

test('the window: a uuid among the latest stored ones is not stored again; an older one is', async (t) => {
  const dir = await tempDir(t)
  // Two generations of two uuids: after 1..5 the window holds 3, 4 and 5.
  const { db, store, close } = await open(dir, { dedupWindow: 2 })
  t.after(close)
  for (let n = 1; n <= 5; n++) await store.insertBatch([event(n)])
  for (const n of [3, 4, 5]) assert.deepEqual(await store.insertBatch([event(n)]), { inserted: 0 }, `uuid ${n}`)
  assert.deepEqual(await store.insertBatch([event(1)]), { inserted: 1 }, 'out of the window: stored again')
  assert.equal(await countOf(db, uuidAt(1)), 2)
})

test('a uuid the filter holds but the table no longer has (its person deleted with events) is stored', async (t) => {
  const dir = await tempDir(t)
  const { db, store, close } = await open(dir)
  t.after(close)
  await store.insertBatch([event(1), event(2)])
  await db.connection.run(`DELETE FROM events WHERE uuid = '${uuidAt(1)}'::UUID`)
  assert.deepEqual(await store.insertBatch([event(1), event(2)]), { inserted: 1 })
  assert.equal(await countOf(db, uuidAt(1)), 1)
  assert.equal(await countOf(db, uuidAt(2)), 1)
})

test('an events file from before 0007 keeps its rows and order, and loses the uuid key', async (t) => {
  const dir = await tempDir(t)
  const before = path.join(dir, 'migrations-before')
  await cp(MIGRATIONS.duckdb, before, { recursive: true })
  const later = (await readdir(before)).filter((f) => f >= '0007')
  assert.ok(later.length > 0, 'the migration under test is in the directory')
  for (const f of later) await rm(path.join(before, f))

  const old = await open(dir, { migrations: before })
  const keyed = await old.db.connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM duckdb_constraints() WHERE table_name = 'events' AND constraint_type = 'PRIMARY KEY'`)
  assert.equal(Number(keyed.getRowObjects()[0]!.n), 1, 'the old schema has the key')
  // Written as that schema's store wrote them (today's store writes columns later migrations add).
  const rows = Array.from({ length: 3000 }, (_, i) => ({ uuid: uuidAt(3000 - i), browser: `b${i}`, i }))
  await old.db.connection.run(`INSERT INTO events (uuid, project_id, event, distinct_id, properties, timestamp, created_at, mat_browser)
    VALUES ${rows.map((r) => `('${r.uuid}'::UUID, 1, 'e', 'd', '${JSON.stringify({ $browser: r.browser, i: r.i })}', now(), now(), '${r.browser}')`).join(', ')}`)
  const order = async (db: DuckDb) => (await db.connection.runAndReadAll('SELECT uuid::VARCHAR AS uuid FROM events')).getRowObjects().map((r) => r.uuid)
  const stored = await order(old.db)
  await old.close()

  const now = await open(dir)
  t.after(() => now.close())
  const constraints = await now.db.connection.runAndReadAll(`SELECT constraint_type FROM duckdb_constraints() WHERE table_name = 'events'`)
  assert.ok(!constraints.getRowObjects().some((r) => r.constraint_type === 'PRIMARY KEY' || r.constraint_type === 'UNIQUE'))
  assert.equal(stored.length, rows.length)
  assert.deepEqual(await order(now.db), stored, 'every row, in the order stored')
  const browser = await now.db.connection.runAndReadAll(`SELECT mat_browser FROM events WHERE uuid = '${uuidAt(3000 - 17)}'::UUID`)
  assert.equal(browser.getRowObjects()[0]!.mat_browser, 'b17')
  // Defaults and NOT NULL survive the copy.
  await now.db.connection.run(`INSERT INTO events (uuid, project_id, event, distinct_id, properties, timestamp, created_at) VALUES ('${uuidAt(9001)}'::UUID, 1, 'x', 'd', '{}', now(), now())`)
  const added = await now.db.connection.runAndReadAll(`SELECT elements_chain, mat_nonstring FROM events WHERE uuid = '${uuidAt(9001)}'::UUID`)
  assert.deepEqual(added.getRowObjects()[0], { elements_chain: '', mat_nonstring: 0 })
  await assert.rejects(now.db.connection.run(`INSERT INTO events (uuid, project_id, event, distinct_id, properties, timestamp, created_at) VALUES (NULL, 1, 'x', 'd', '{}', now(), now())`), /NOT NULL/)
  // What the old file held is deduplicated against after the upgrade.
  assert.deepEqual(await now.store.insertBatch([event(1), event(3000), event(3001)]), { inserted: 1 })
})

test('a batch too large for the memory limit is stored in parts, each event once', async (t) => {
  const dir = await tempDir(t)
  // 10,000 events of 2 KB need more than 192 MB in one insert; 96MB fits about a thousand at a time.
  const db = await openDuckDb(path.join(dir, 'events.duckdb'), MIGRATIONS.duckdb, { memoryLimit: '96MB' })
  const store = await createDuckDbEventStore(db, { stagingDir: path.join(dir, 'staging') })
  const big = 'x'.repeat(2000)
  const events = Array.from({ length: 10_000 }, (_, i) => event(i + 1, { properties: JSON.stringify({ $current_url: big, i }) }))
  // Two copies of one event land in different halves.
  events.push(event(5))
  assert.deepEqual(await store.insertBatch(events), { inserted: 10_000 })
  const r = await db.connection.runAndReadAll('SELECT count(*)::INTEGER AS n, count(DISTINCT uuid)::INTEGER AS d FROM events')
  assert.deepEqual(r.getRowObjects()[0], { n: 10_000, d: 10_000 })
  // Closed here, before the directory goes (t.after hooks run in the order they were added).
  await store.close()
  await db.close()
})

test("one event too large for the memory limit fails as neither the store's fault nor surely the data's", async (t) => {
  const dir = await tempDir(t)
  const db = await openDuckDb(path.join(dir, 'events.duckdb'), MIGRATIONS.duckdb, { memoryLimit: '96MB' })
  const store = await createDuckDbEventStore(db, { stagingDir: path.join(dir, 'staging') })
  const huge = event(1, { properties: JSON.stringify({ $current_url: 'y'.repeat(19_000_000) }) })
  const err = await store.insertBatch([event(2), huge]).then(() => null, (e: unknown) => e as Error & { transient?: unknown })
  assert.ok(err, 'the insert fails')
  assert.match(err.message, /^event too large for DuckDB's memory limit/)
  // Not transient (retried forever, ingestion blocked), not false (a conversion error): the pipeline isolates it after a few tries.
  assert.equal(err.transient, null)
  assert.equal(await countOf(db, uuidAt(2)), 1, "the half before it is stored")
  await store.close()
  await db.close()
})
