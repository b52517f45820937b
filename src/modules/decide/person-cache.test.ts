import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPersonCache } from './person-cache.ts'
import type { PersonDataReader, PersonDataWriter, StoredPerson } from './person-data-store.ts'

/** An in-memory store counting its reads: the cache is judged by what reaches the store. */
function countingStore() {
  const people = new Map<string, StoredPerson>()
  const reads: string[][] = []
  let gate: Promise<void> | null = null
  const store: PersonDataReader & PersonDataWriter = {
    async getPersons(_p, ids) {
      reads.push([...ids])
      const snapshot = new Map(ids.filter((id) => people.has(id)).map((id) => [id, people.get(id)!]))
      if (gate) await gate
      return snapshot
    },
    async getGroups() {
      return new Map()
    },
    async getHashKeyOverrides() {
      return []
    },
    async writeHashKeyOverrides() {},
    async ensurePersons() {
      return new Map()
    },
    async findPersonIdsByUuid() {
      return []
    },
    async upsertPersons(_p, list) {
      for (const p of list) people.set(p.distinctId, { personId: 1, properties: p.properties, staticCohortIds: [] })
    },
    async upsertGroups() {},
  }
  return { store, reads, people, hold: () => { let open!: () => void; gate = new Promise((r) => (open = r)); return () => { gate = null; open() } } }
}

test('person cache: a second read of the same person does not reach the store', async () => {
  const s = countingStore()
  await s.store.upsertPersons(1, [{ distinctId: 'a', properties: { plan: 'pro' } }])
  const cache = createPersonCache(s.store, { maxEntries: 10, ttlMs: Infinity })
  assert.equal((await cache.getPersons(1, ['a'])).get('a')?.properties.plan, 'pro')
  assert.equal((await cache.getPersons(1, ['a'])).get('a')?.properties.plan, 'pro')
  assert.deepEqual(s.reads, [['a']])
})

test('person cache: unknown distinct ids are remembered as absent', async () => {
  const s = countingStore()
  const cache = createPersonCache(s.store, { maxEntries: 10, ttlMs: Infinity })
  assert.equal((await cache.getPersons(1, ['nobody'])).size, 0)
  assert.equal((await cache.getPersons(1, ['nobody'])).size, 0)
  assert.equal(s.reads.length, 1)
})

test('person cache: a write through the cache is visible to the next read', async () => {
  const s = countingStore()
  const cache = createPersonCache(s.store, { maxEntries: 10, ttlMs: Infinity })
  assert.equal((await cache.getPersons(1, ['a'])).size, 0)
  await cache.upsertPersons(1, [{ distinctId: 'a', properties: { plan: 'free' } }])
  assert.equal((await cache.getPersons(1, ['a'])).get('a')?.properties.plan, 'free')
})

test('person cache: a read in flight across a write does not cache the stale person', async () => {
  const s = countingStore()
  const cache = createPersonCache(s.store, { maxEntries: 10, ttlMs: Infinity })
  await s.store.upsertPersons(1, [{ distinctId: 'a', properties: { v: 1 } }])
  const release = s.hold()
  const stale = cache.getPersons(1, ['a'])
  await cache.upsertPersons(1, [{ distinctId: 'a', properties: { v: 2 } }])
  release()
  assert.equal((await stale).get('a')?.properties.v, 1)
  assert.equal((await cache.getPersons(1, ['a'])).get('a')?.properties.v, 2)
})

test('person cache: holds at most maxEntries, dropping the least recently used', async () => {
  const s = countingStore()
  const cache = createPersonCache(s.store, { maxEntries: 2, ttlMs: Infinity })
  await cache.getPersons(1, ['a'])
  await cache.getPersons(1, ['b'])
  await cache.getPersons(1, ['a']) // a is now the most recent
  await cache.getPersons(1, ['c']) // evicts b
  assert.equal(cache.size, 2)
  s.reads.length = 0
  await cache.getPersons(1, ['a'])
  await cache.getPersons(1, ['b'])
  assert.deepEqual(s.reads, [['b']])
})

test('person cache: invalidateProject forgets only that project', async () => {
  const s = countingStore()
  const cache = createPersonCache(s.store, { maxEntries: 10, ttlMs: Infinity })
  await cache.getPersons(1, ['a'])
  await cache.getPersons(2, ['a'])
  cache.invalidateProject(1)
  s.reads.length = 0
  await cache.getPersons(1, ['a'])
  await cache.getPersons(2, ['a'])
  assert.equal(s.reads.length, 1)
})

test('person cache: entries older than the ttl are read again', async () => {
  const s = countingStore()
  const cache = createPersonCache(s.store, { maxEntries: 10, ttlMs: 0 })
  await cache.getPersons(1, ['a'])
  await new Promise((r) => setTimeout(r, 5))
  await cache.getPersons(1, ['a'])
  assert.equal(s.reads.length, 2)
})
