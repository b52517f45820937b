import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { distinctIdsToLookUp, planPersonUpdates, type PersonEvent } from '../../src/domain/persons/index.ts'
import type { GroupStore, PersonStore } from '../../src/ingestion/person-store.ts'
import type { PersonDataReader, PersonDataWriter } from '../../src/modules/persons/person-data-store.ts'
import type { SqlClient } from '../../src/storage/sql/sql-client.ts'
import type { OpenInWorld } from './sql-harness.ts'

export interface IngestionPersonPorts {
  store: PersonStore
  groups: GroupStore
  /** The /decide reader over the same database: what ingestion writes, flag evaluation reads. */
  reader: PersonDataReader & PersonDataWriter
  /** Statements the store issued (a counting wrapper around its SqlClient). */
  statements: { count: number }
}

/** A SqlClient that counts every statement run through it (transactions included). */
export function countingSqlClient(db: SqlClient, counter: { count: number }): SqlClient {
  const wrap = (q: SqlClient): SqlClient => ({
    query: (sql, params) => {
      counter.count++
      return q.query(sql, params)
    },
    exec: (sql) => {
      counter.count++
      return q.exec(sql)
    },
    inTransaction: (fn) => {
      counter.count += 2 // BEGIN, COMMIT
      return q.inTransaction((tx) => fn(wrap(tx)))
    },
    close: () => q.close(),
  })
  return wrap(db)
}

let t0 = Date.parse('2024-03-01T00:00:00Z')
const ev = (event: string, distinctId: string, properties: Record<string, unknown> = {}): PersonEvent => ({
  uuid: randomUUID(), event, distinctId, timestamp: new Date((t0 += 1000)), properties,
})

/** Runs one batch the way the persons step does: one look-up, plan, one apply. */
async function runBatch(store: PersonStore, projectId: number, events: PersonEvent[]) {
  const found = await store.lookUp(projectId, distinctIdsToLookUp(events))
  const plan = planPersonUpdates({
    events, knownPersons: found.persons, newId: randomUUID, personlessId: () => randomUUID(), personlessBefore: found.personless,
  })
  await store.apply(projectId, plan)
  return plan
}

/** What every ingestion person store promises (PGlite and PostgreSQL). */
export function ingestionPersonStoreContract(name: string, open: OpenInWorld<IngestionPersonPorts>): void {
  test(`${name} ingestion persons: a batch creates persons that a look-up returns with all their distinct ids and /decide reads`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const empty = await port.store.lookUp(world.projectId, ['a', 'b'])
    assert.equal(empty.persons.size, 0)
    await runBatch(port.store, world.projectId, [
      ev('pageview', 'anon-1', { $set: { plan: 'free', 'k☕': 'v\u0000' } }),
      ev('$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set_once: { first: 1 } }),
      ev('pageview', 'other'),
    ])
    const found = await port.store.lookUp(world.projectId, ['user-1', 'other', 'nobody'])
    assert.deepEqual([...found.persons.keys()].sort(), ['other', 'user-1'])
    const p = found.persons.get('user-1')!
    assert.deepEqual([...p.distinctIds].sort(), ['anon-1', 'user-1'])
    const { $creator_event_uuid: creator, ...props } = p.properties
    assert.equal(typeof creator, 'string')
    assert.deepEqual(props, { plan: 'free', 'k☕': 'v\uFFFD', first: 1 })
    assert.equal(p.isIdentified, true)
    assert.ok(p.version >= 1)
    assert.notEqual(found.persons.get('other')!.id, p.id)
    const read = await port.reader.getPersons(world.projectId, ['anon-1', 'user-1'])
    assert.equal(read.get('anon-1')!.personId, read.get('user-1')!.personId)
    assert.equal(read.get('user-1')!.properties.plan, 'free')
    // Other projects see nothing.
    assert.equal((await port.store.lookUp(world.otherProjectId, ['user-1'])).persons.size, 0)
  })

  test(`${name} ingestion persons: $merge_dangerously deletes the merged person and moves its distinct ids, hash-key overrides and cohort rows`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await runBatch(port.store, world.projectId, [
      ev('$identify', 'u1', { $anon_distinct_id: 'a1', $set: { x: 1 } }),
      ev('$identify', 'u2', { $anon_distinct_id: 'a2', $set: { y: 2 } }),
    ])
    await port.reader.writeHashKeyOverrides({ projectId: world.projectId, distinctIds: ['u2'], flagKeys: ['f'], hashKey: 'h2' })
    // $identify of two identified persons does not merge them.
    await runBatch(port.store, world.projectId, [ev('$identify', 'u1', { $anon_distinct_id: 'u2' })])
    let found = await port.store.lookUp(world.projectId, ['u1', 'u2'])
    assert.notEqual(found.persons.get('u1')!.id, found.persons.get('u2')!.id)
    const plan = await runBatch(port.store, world.projectId, [ev('$merge_dangerously', 'u1', { alias: 'u2' })])
    assert.equal(plan.deletes.length, 1)
    found = await port.store.lookUp(world.projectId, ['u1', 'u2', 'a2'])
    const merged = found.persons.get('u1')!
    assert.equal(found.persons.get('u2')!.id, merged.id)
    assert.deepEqual([...merged.distinctIds].sort(), ['a1', 'a2', 'u1', 'u2'])
    assert.equal(merged.properties.x, 1)
    assert.equal(merged.properties.y, 2)
    const overrides = await port.reader.getHashKeyOverrides(world.projectId, ['u1'])
    assert.deepEqual(overrides.map((o) => [o.flagKey, o.hashKey]), [['f', 'h2']])
  })

  test(`${name} ingestion persons: personless ids are recorded and returned by the look-up; no person is created`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    await runBatch(port.store, world.projectId, [ev('pageview', 'ghost', { $process_person_profile: false, $set: { a: 1 } })])
    const found = await port.store.lookUp(world.projectId, ['ghost'])
    assert.equal(found.persons.size, 0)
    assert.deepEqual([...found.personless], ['ghost'])
    assert.equal((await port.reader.getPersons(world.projectId, ['ghost'])).size, 0)
  })

  test(`${name} ingestion persons: statements per batch do not grow with the number of distinct ids`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const cost = async (n: number, tag: string) => {
      const events = Array.from({ length: n }, (_, i) => ev('$identify', `${tag}-user-${i}`, { $anon_distinct_id: `${tag}-anon-${i}`, $set: { i } }))
      const before = port.statements.count
      await runBatch(port.store, world.projectId, events)
      // A second batch touching the same persons: the look-up finds them all, the apply updates them all.
      await runBatch(port.store, world.projectId, events.map((e) => ev('pageview', e.distinctId, { $set: { again: true } })))
      return port.statements.count - before
    }
    const small = await cost(2, 's')
    const large = await cost(500, 'l')
    assert.ok(small > 0)
    assert.equal(large, small)
    assert.equal((await port.store.lookUp(world.projectId, ['l-anon-499'])).persons.get('l-anon-499')!.properties.again, true)
  })
}

/** What every ingestion group store promises (PGlite and PostgreSQL). */
export function ingestionGroupStoreContract(name: string, open: OpenInWorld<IngestionPersonPorts>): void {
  test(`${name} ingestion groups: upserted groups are found by (index, key), keep the earliest created_at, and /decide reads them`, async (t) => {
    const { port, world, close } = await open()
    t.after(close)
    const at = new Date('2024-01-02T03:04:05.678Z')
    await port.groups.applyGroups(world.projectId, [
      { typeIndex: 0, key: 'acme', properties: { plan: 'a', 'n\u0000': 1 }, createdAt: at, version: 1 },
      { typeIndex: 1, key: 'k\u0000', properties: {}, createdAt: at, version: 1 },
    ])
    await port.groups.applyGroups(world.projectId, [
      { typeIndex: 0, key: 'acme', properties: { plan: 'b' }, createdAt: new Date('2025-01-01T00:00:00Z'), version: 2 },
    ])
    const found = await port.groups.lookUpGroups(world.projectId, [{ typeIndex: 0, key: 'acme' }, { typeIndex: 1, key: 'k\u0000' }, { typeIndex: 0, key: 'none' }])
    assert.deepEqual([...found.keys()].sort(), ['0:acme', '1:k\u0000'])
    assert.deepEqual(found.get('0:acme')!.properties, { plan: 'b' })
    assert.equal(found.get('0:acme')!.createdAt.getTime(), at.getTime())
    assert.equal((await port.groups.lookUpGroups(world.otherProjectId, [{ typeIndex: 0, key: 'acme' }])).size, 0)
    const read = await port.reader.getGroups(world.projectId, [{ groupTypeIndex: 0, groupKey: 'acme' }])
    assert.deepEqual(read.get('0:acme'), { plan: 'b' })
  })
}
