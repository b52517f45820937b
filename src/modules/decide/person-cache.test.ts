import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPersonCache } from './person-cache.ts'
import type { PersonDataReader, PersonDataWriter, StoredPerson } from '../persons/person-data-store.ts'
import { manualClock } from '../../shared/clock.ts'

/** An in-memory store counting its reads: the cache is judged by what reaches the store. */
function countingStore() {
  const people = new Map<string, StoredPerson>()
  const reads: string[][] = []
  const scans: Array<number | null> = []
  let nextId = 1
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
    async scanPersons(_p, { beforePersonId, limit }) {
      scans.push(beforePersonId)
      const page = [...people]
        .filter(([, p]) => beforePersonId === null || p.personId < beforePersonId)
        .sort(([, a], [, b]) => b.personId - a.personId)
        .slice(0, limit)
        .map(([distinctId, person]) => ({ distinctId, person }))
      if (gate) await gate
      return { persons: page, next: page.length < limit ? null : page[page.length - 1].person.personId }
    },
    async writeHashKeyOverrides() {},
    async ensurePersons() {
      return new Map()
    },
    async findPersonIdsByUuid() {
      return []
    },
    async upsertPersons(_p, list) {
      for (const p of list) {
        const personId = people.get(p.distinctId)?.personId ?? nextId++
        people.set(p.distinctId, { personId, properties: p.properties, staticCohortIds: [] })
      }
    },
    async upsertGroups() {},
  }
  return { store, reads, scans, people, hold: () => { let open!: () => void; gate = new Promise((r) => (open = r)); return () => { gate = null; open() } } }
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
  const clock = manualClock()
  const cache = createPersonCache(s.store, { maxEntries: 10, ttlMs: 1000, clock })
  await cache.getPersons(1, ['a'])
  clock.advance(999)
  await cache.getPersons(1, ['a'])
  assert.equal(s.reads.length, 1)
  clock.advance(2)
  await cache.getPersons(1, ['a'])
  assert.equal(s.reads.length, 2)
})

const warmAll = { withCohorts: false, chunk: 2, shouldStop: () => false }
const persons = (n: number) => Array.from({ length: n }, (_, i) => ({ distinctId: `p${i}`, properties: { i } }))

test('person cache: warm-up loads persons in chunks, newest first, and later reads do not reach the store', async () => {
  const s = countingStore()
  await s.store.upsertPersons(1, persons(5))
  const cache = createPersonCache(s.store, { maxEntries: 10, ttlMs: Infinity })
  assert.equal(await cache.warm(1, warmAll), 5)
  assert.equal(s.scans.length, 3)
  await cache.getPersons(1, ['p0', 'p4'])
  assert.deepEqual(s.reads, [])
  assert.deepEqual(cache.stats(), { hits: 2, misses: 0, warmed: 5, entries: 5 })
})

test('person cache: warm-up stops when the cache is full, keeping the most recent persons', async () => {
  const s = countingStore()
  await s.store.upsertPersons(1, persons(5))
  const cache = createPersonCache(s.store, { maxEntries: 3, ttlMs: Infinity })
  assert.equal(await cache.warm(1, warmAll), 3)
  await cache.getPersons(1, ['p4', 'p3', 'p2'])
  assert.deepEqual(s.reads, [])
})

test('person cache: a write while a warm-up chunk is read leaves no stale entry', async () => {
  const s = countingStore()
  await s.store.upsertPersons(1, [{ distinctId: 'a', properties: { v: 1 } }])
  const cache = createPersonCache(s.store, { maxEntries: 10, ttlMs: Infinity })
  const release = s.hold()
  const warming = cache.warm(1, warmAll)
  await cache.upsertPersons(1, [{ distinctId: 'a', properties: { v: 2 } }])
  release()
  await warming
  assert.equal((await cache.getPersons(1, ['a'])).get('a')?.properties.v, 2)
})

test('person cache: warm-up does not replace an entry read meanwhile, and stops when asked', async () => {
  const s = countingStore()
  await s.store.upsertPersons(1, persons(4))
  const cache = createPersonCache(s.store, { maxEntries: 10, ttlMs: Infinity })
  await cache.getPersons(1, ['p3'])
  assert.equal(await cache.warm(1, warmAll), 3)
  let calls = 0
  const other = createPersonCache(s.store, { maxEntries: 10, ttlMs: Infinity })
  assert.equal(await other.warm(1, { ...warmAll, shouldStop: () => ++calls > 1 }), 0)
})
