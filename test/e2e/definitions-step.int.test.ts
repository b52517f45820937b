import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import type { StoredEvent } from '../../src/ingestion/event-store.ts'
import { createIngestionCounters } from '../../src/ingestion/ingestion-counters.ts'
import { createPipeline } from '../../src/ingestion/pipeline.ts'
import { decodeQueuedEvent, encodeQueuedEvent } from '../../src/ingestion/queued-event.ts'
import { createDefinitionsStep } from '../../src/ingestion/steps/definitions-step.ts'
import { createStoreEventsStep } from '../../src/ingestion/steps/store-events-step.ts'
import type { DefinitionStore } from '../../src/modules/definitions/definition-store.ts'
import { createDuckDbDeadLetterStore } from '../../src/storage/duckdb/duckdb-dead-letter-store.ts'
import { createDuckDbEventStore } from '../../src/storage/duckdb/duckdb-event-store.ts'
import { openDuckDb, type DuckDb } from '../../src/storage/duckdb/open-duckdb.ts'
import { openPgliteSqlClient } from '../../src/storage/pglite/pglite-sql-client.ts'
import type { SqlClient } from '../../src/storage/sql/sql-client.ts'
import { createSqlDefinitionStore } from '../../src/storage/sql/sql-definition-store.ts'
import { createSqlProjectStore } from '../../src/storage/sql/sql-project-store.ts'
import { runMigrations } from '../../src/storage/sql/run-migrations.ts'
import { countingSqlClient } from '../contracts/ingestion-person-store.contract.ts'

// The definitions step on the real metadata store (PGlite), its SQL counted: set-based, and silent
// on a steady stream of known definitions.
let meta: SqlClient
let projectId: number
const PAGE = { limit: 1000, offset: 0 }
const PROPS_Q = { type: 1, groupTypeIndex: null, search: [], names: null, isNumerical: null, isFeatureFlag: null, excluded: [], excludeCoreProperties: false, eventNames: null, filterByEventNames: false } as const

before(async () => {
  meta = await openPgliteSqlClient('memory://')
  await runMigrations(meta, MIGRATIONS.metadata)
  const { project } = await createSqlProjectStore(meta).bootstrap({
    organizationName: 'Org', projectName: 'P', projectApiToken: 'phc_definitions_step',
    user: { email: 'o@example.com', firstName: 'O' }, personalKey: { hash: 'h', mask: 'phx_...', label: 'k' },
  })
  projectId = project.id
})
after(async () => meta?.close())

const stored = (event: string, properties: Record<string, unknown>): StoredEvent => ({
  uuid: randomUUID(), projectId, event, distinctId: 'u', properties: JSON.stringify(properties), elementsChain: '',
  timestamp: new Date(), createdAt: new Date(), personId: null,
})

/** 500 events over 5 names and 20 properties, with `$set` person properties. */
const stream = (prefix: string) =>
  Array.from({ length: 500 }, (_, i) => stored(`${prefix}event ${i % 5}`, {
    [`${prefix}p${i % 20}`]: i, [`${prefix}s${i % 7}`]: 'text', $set: { [`${prefix}person${i % 3}`]: true },
  }))

test('a batch is written in one statement per table; a steady stream of known definitions writes nothing; stale ones once an hour', async () => {
  const statements = { count: 0 }
  let now = Date.parse('2026-05-01T00:00:00Z')
  const step = createDefinitionsStep({ store: createSqlDefinitionStore(countingSqlClient(meta, statements)), now: () => new Date(now) })
  const first = await step.run(stream('a'))
  assert.equal(first.length, 500)
  assert.ok(first.every((r) => r.kind === 'ok'))
  assert.equal(statements.count, 3)
  const store = createSqlDefinitionStore(meta)
  const props = (await store.listProperties(projectId, PROPS_Q, PAGE)).rows.filter((p) => p.name.startsWith('a'))
  assert.equal(props.length, 27)
  assert.equal((await store.listProperties(projectId, { ...PROPS_Q, type: 2 }, PAGE)).rows.filter((p) => p.name.startsWith('a')).length, 3)

  statements.count = 0
  now += 30 * 60_000
  for (let i = 0; i < 5; i++) await step.run(stream('a'))
  assert.equal(statements.count, 0, 'known definitions within the hour are not written')

  // One new property: only it and its pair are written (the known event is fresh).
  await step.run([stored('aevent 0', { anew: 'x' })])
  assert.equal(statements.count, 2)

  statements.count = 0
  now += 61 * 60_000
  await step.run(stream('a'))
  assert.equal(statements.count, 2, 'stale events and properties refreshed; pairs are never rewritten')
  const events = (await store.listEvents(projectId, { search: ['aevent'], eventType: 'event', ordering: 'name' }, PAGE)).rows
  assert.ok(events.every((e) => e.lastSeenAt.getTime() === now))
})

test('a bounded cache: past maxCached the oldest definitions are written again', async () => {
  const statements = { count: 0 }
  const step = createDefinitionsStep({ store: createSqlDefinitionStore(countingSqlClient(meta, statements)), maxCached: 10 })
  await step.run([stored('bounded', { b1: 1 })])
  await step.run(stream('b'))
  statements.count = 0
  await step.run([stored('bounded', { b1: 1 })])
  assert.equal(statements.count, 3, 'evicted, so written again')
})

test('a property first seen without a type is written again once a value has one', async () => {
  const statements = { count: 0 }
  const step = createDefinitionsStep({ store: createSqlDefinitionStore(countingSqlClient(meta, statements)) })
  await step.run([stored('typed later', { tl: { nested: true } })])
  await step.run([stored('typed later', { tl: { nested: true } })])
  statements.count = 0
  await step.run([stored('typed later', { tl: 5 })])
  assert.equal(statements.count, 1)
  const [def] = (await createSqlDefinitionStore(meta).listProperties(projectId, { ...PROPS_Q, names: ['tl'] }, PAGE)).rows
  assert.equal(def!.propertyType, 'Numeric')
})

test('a store that refuses: the events go on and are stored, nothing is dead-lettered, the definitions come with a later batch', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-defs-'))
  const duck: DuckDb = await openDuckDb(':memory:', MIGRATIONS.duckdb)
  t.after(async () => { await duck.close(); await rm(dir, { recursive: true, force: true }) })
  let failure: Error | null = Object.assign(new Error('value too long for type character varying'), { transient: false })
  const real = createSqlDefinitionStore(meta)
  const store: Pick<DefinitionStore, 'recordSeen'> = {
    recordSeen: async (seen, at) => {
      if (failure) throw failure
      return real.recordSeen(seen, at)
    },
  }
  const deadLetters = createDuckDbDeadLetterStore(await duck.connect())
  const counters = createIngestionCounters()
  const pipeline = createPipeline({
    steps: [createDefinitionsStep({ store })],
    store: createStoreEventsStep(await createDuckDbEventStore(duck, { stagingDir: dir })),
    deadLetters,
    counters,
  })
  const message = (event: string) => encodeQueuedEvent(projectId, {
    uuid: randomUUID(), event, distinctId: 'u', properties: { refused_prop: 1 }, elementsChain: '', timestamp: new Date(), createdAt: new Date(), sentAt: null,
  })
  const countEvents = async () => Number((await duck.connection.runAndReadAll('SELECT count(*) AS n FROM events')).getRowObjects()[0]!.n)

  await pipeline([message('refused'), message('refused')])
  assert.equal(await countEvents(), 2)
  assert.equal((await deadLetters.list({ limit: 10, offset: 0 })).count, 0)

  // Transient: the batch fails whole (the queue delivers it again); nothing is stored twice or lost.
  failure = Object.assign(new Error('connection terminated'), { transient: true })
  await assert.rejects(pipeline([message('refused')]))
  assert.equal(await countEvents(), 2)

  failure = null
  await pipeline([message('refused')])
  assert.equal(await countEvents(), 3)
  const events = (await real.listEvents(projectId, { search: ['refused'], eventType: 'event', ordering: 'name' }, PAGE)).rows
  assert.deepEqual(events.map((e) => e.name), ['refused'])
})

/** One event of `n` distinct keys (`prefix0`...). */
const wide = (event: string, prefix: string, n: number) => {
  const properties: Record<string, number> = {}
  for (let i = 0; i < n; i++) properties[`${prefix}${i}`] = i
  return stored(event, properties)
}

test('an event of more keys than maxPerEvent adds its name only, and is counted; one at the limit is written whole', async () => {
  const statements = { count: 0 }
  const counters = createIngestionCounters()
  const step = createDefinitionsStep({ store: createSqlDefinitionStore(countingSqlClient(meta, statements)), maxPerEvent: 1_000, counters })
  // 100,000 keys: the event PostHog's property-defs service skips (update_count_skip_threshold).
  const results = await step.run([wide('too wide', 'tw', 100_000), stored('too wide set', { $set: Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`ts${i}`, i])) })])
  assert.ok(results.every((r) => r.kind === 'ok'), 'the events go on')
  assert.equal(statements.count, 1, 'their names only')
  assert.equal(counters.snapshot()['limited:definitions_skipped'], 2)
  const store = createSqlDefinitionStore(meta)
  assert.equal((await store.listProperties(projectId, { ...PROPS_Q, search: ['tw'] }, PAGE)).rows.length, 0)
  assert.deepEqual((await store.listEvents(projectId, { search: ['too wide'], eventType: 'event', ordering: 'name' }, PAGE)).rows.map((e) => e.name), ['too wide', 'too wide set'])

  await step.run([wide('at limit', 'al', 1_000)])
  assert.equal((await store.listProperties(projectId, { ...PROPS_Q, search: ['al'] }, { limit: 2000, offset: 0 })).rows.filter((p) => /^al\d+$/.test(p.name)).length, 1_000)
  assert.equal(counters.snapshot()['limited:definitions_skipped'], 2)
})

test('many new definitions are written in statements of chunkRows rows, the event loop turning between them', async () => {
  const statements = { count: 0 }
  const step = createDefinitionsStep({ store: createSqlDefinitionStore(countingSqlClient(meta, statements)), chunkRows: 500 })
  // 2,000 properties and 2,000 event-property pairs plus one event name: 4,001 rows, 9 chunks.
  let turns = 0
  let running = true
  const spin = () => { if (running) { turns++; setImmediate(spin) } }
  setImmediate(spin)
  await step.run([wide('chunked', 'ch', 2_000)])
  running = false
  assert.ok(statements.count >= 9, `${statements.count} statements`)
  assert.ok(turns >= 8, `the event loop turned ${turns} times while the step ran`)
  const store = createSqlDefinitionStore(meta)
  assert.equal((await store.listProperties(projectId, { ...PROPS_Q, search: ['ch'] }, { limit: 5000, offset: 0 })).rows.filter((p) => /^ch\d+$/.test(p.name)).length, 2_000)
})

/** An event as the worker reads it off the queue: with capture's step properties and shape. */
const queued = (event: string, properties: Record<string, unknown>): StoredEvent =>
  decodeQueuedEvent(encodeQueuedEvent(projectId, {
    uuid: randomUUID(), event, distinctId: 'u', properties, elementsChain: '', timestamp: new Date(), createdAt: new Date(), sentAt: null,
  }))

test('queued events of a shape recorded within the hour are not parsed; new keys, new types and $set keys still are written', async () => {
  const statements = { count: 0 }
  let now = Date.parse('2026-06-01T00:00:00Z')
  const step = createDefinitionsStep({ store: createSqlDefinitionStore(countingSqlClient(meta, statements)), now: () => new Date(now) })
  const page = (i: number) => queued('shaped', { sh_url: `https://x/${i}`, sh_n: i, $set: { sh_person: i } })
  await step.run([page(0), page(1)])
  assert.equal(statements.count, 3)

  statements.count = 0
  const steady = Array.from({ length: 50 }, (_, i) => page(i))
  await step.run(steady)
  assert.equal(statements.count, 0)
  assert.ok(steady.every((e) => e.parsed === undefined), 'a known shape is not parsed')

  // The same top-level shape, a new person property in $set: written.
  await step.run([queued('shaped', { sh_url: 'u', sh_n: 1, $set: { sh_person2: 'x' } })])
  assert.equal(statements.count, 1)
  // A new key, then a new type of a key: new shapes, parsed and written.
  statements.count = 0
  await step.run([queued('shaped', { sh_url: 'u', sh_n: 1, sh_new: true, $set: { sh_person: 1 } })])
  assert.equal(statements.count, 2, 'the property and its pair')
  await step.run([queued('shaped', { sh_url: null, sh_n: 1, $set: { sh_person: 1 } }), queued('shaped', { sh_url: 'u', sh_n: 'text', $set: { sh_person: 1 } })])
  const store = createSqlDefinitionStore(meta)
  const types = Object.fromEntries((await store.listProperties(projectId, { ...PROPS_Q, search: ['sh_'] }, PAGE)).rows.map((p) => [p.name, p.propertyType]))
  assert.deepEqual(types, { sh_url: 'String', sh_n: 'Numeric', sh_new: 'Boolean' })

  // The same shape on another event name is new for that name.
  statements.count = 0
  await step.run([queued('shaped too', { sh_url: 'u', sh_n: 1, $set: { sh_person: 1 } })])
  assert.equal(statements.count, 2, 'the event and its pairs')

  statements.count = 0
  now += 61 * 60_000
  const stale = [page(1)]
  await step.run(stale)
  assert.ok(stale[0]!.parsed !== undefined, 'an hour later the shape is parsed again')
  assert.equal(statements.count, 2, 'stale event and properties refreshed')
})

test('a known shape over maxPerEvent stays counted and adds its name only; a known shape whose $set passes the limit too', async () => {
  const statements = { count: 0 }
  const counters = createIngestionCounters()
  const step = createDefinitionsStep({ store: createSqlDefinitionStore(countingSqlClient(meta, statements)), maxPerEvent: 10, counters })
  const keys = (n: number, prefix: string) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]))
  await step.run([queued('shape wide', keys(11, 'sw')), queued('shape wide', keys(11, 'sw'))])
  await step.run([queued('shape wide', keys(11, 'sw'))])
  assert.equal(counters.snapshot()['limited:definitions_skipped'], 3)
  await step.run([queued('shape narrow', { ...keys(5, 'sn') }), queued('shape narrow', { ...keys(5, 'sn') })])
  assert.equal(counters.snapshot()['limited:definitions_skipped'], 3)
  await step.run([queued('shape narrow', { ...keys(5, 'sn'), $set: keys(4, 'snp') })])
  assert.equal(counters.snapshot()['limited:definitions_skipped'], 3, 'a new shape (with $set): parsed, 6 own keys and 4 in $set')
  await step.run([queued('shape narrow', { ...keys(5, 'sn'), $set: keys(5, 'snq') })])
  assert.equal(counters.snapshot()['limited:definitions_skipped'], 4, 'the same shape, not parsed: 6 own keys and 5 in $set')
  assert.equal((await createSqlDefinitionStore(meta).listProperties(projectId, { ...PROPS_Q, type: 2, search: ['snq'] }, PAGE)).rows.length, 0)
  const store = createSqlDefinitionStore(meta)
  assert.equal((await store.listProperties(projectId, { ...PROPS_Q, search: ['sw'] }, PAGE)).rows.length, 0)
})
