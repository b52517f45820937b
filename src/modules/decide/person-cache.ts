import type { GroupRef, PersonDataReader, PersonDataWriter, StoredPerson } from '../persons/person-data-store.ts'
import { systemClock, type Clock } from '../../shared/clock.ts'

export interface PersonCacheOptions {
  /** Reads the time for expiry (default: the system clock). */
  clock?: Clock
  /** Most entries kept (persons and groups, known and unknown alike); least recently used go first. */
  maxEntries: number
  /**
   * How long an entry may be served. Infinity when this process is the only writer (embedded);
   * finite at scale, where another node's writes cannot invalidate this cache.
   */
  ttlMs: number
}

interface Entry<V> {
  value: V | undefined
  at: number
}

/** A bounded LRU map on insertion order: a hit moves the key to the young end. */
function createLru<V>(max: number, ttlMs: number) {
  const map = new Map<string, Entry<V>>()
  return {
    get(key: string, now: number): Entry<V> | undefined {
      const e = map.get(key)
      if (e === undefined) return undefined
      if (now - e.at > ttlMs) {
        map.delete(key)
        return undefined
      }
      map.delete(key)
      map.set(key, e)
      return e
    },
    set(key: string, value: V | undefined, now: number) {
      map.delete(key)
      map.set(key, { value, at: now })
      if (map.size > max) map.delete(map.keys().next().value as string)
    },
    deleteWhere(prefix: string) {
      for (const key of map.keys()) if (key.startsWith(prefix)) map.delete(key)
    },
    delete: (key: string) => map.delete(key),
    has: (key: string) => map.has(key),
    get size() {
      return map.size
    },
  }
}

/**
 * Person and group properties for /decide through a bounded LRU (ARCHITECTURE: "person properties
 * through a bounded LRU"), in front of the set-based store. Absent persons are cached too: most
 * /decide callers are anonymous. Every write made through this object invalidates what it touches;
 * `invalidateProject` drops a project's entries (static cohort membership changed).
 */
export function createPersonCache(store: PersonDataReader & PersonDataWriter, opts: PersonCacheOptions) {
  const clock = opts.clock ?? systemClock
  const persons = createLru<StoredPerson>(opts.maxEntries, opts.ttlMs)
  const groups = createLru<Record<string, unknown>>(opts.maxEntries, opts.ttlMs)
  const personKey = (projectId: number, withCohorts: boolean, distinctId: string) => `${projectId}:${withCohorts ? 1 : 0}:${distinctId}`
  // Bumped by every write: a read that was in flight across a write does not cache what it saw.
  let epoch = 0
  const stats = { hits: 0, misses: 0, warmed: 0 }
  const forgetPersons = (projectId: number, distinctIds: readonly string[]) => {
    epoch++
    for (const id of distinctIds) {
      persons.delete(personKey(projectId, false, id))
      persons.delete(personKey(projectId, true, id))
    }
  }

  const cached: PersonDataReader & PersonDataWriter = {
    ...store,
    async getPersons(projectId, distinctIds, o = {}) {
      const now = clock.now()
      const withCohorts = o.withCohorts ?? false
      const out = new Map<string, StoredPerson>()
      const missing: string[] = []
      for (const id of distinctIds) {
        const hit = persons.get(personKey(projectId, withCohorts, id), now)
        if (hit === undefined) missing.push(id)
        else if (hit.value !== undefined) out.set(id, hit.value)
      }
      stats.hits += distinctIds.length - missing.length
      stats.misses += missing.length
      if (missing.length === 0) return out
      const seen = epoch
      const loaded = await store.getPersons(projectId, missing, o)
      for (const id of missing) {
        const p = loaded.get(id)
        if (seen === epoch) persons.set(personKey(projectId, withCohorts, id), p, now)
        if (p) out.set(id, p)
      }
      return out
    },
    async getGroups(projectId, refs) {
      const now = clock.now()
      const out = new Map<string, Record<string, unknown>>()
      const missing: GroupRef[] = []
      for (const r of refs) {
        const key = `${r.groupTypeIndex}:${r.groupKey}`
        const hit = groups.get(`${projectId}:${key}`, now)
        if (hit === undefined) missing.push(r)
        else if (hit.value !== undefined) out.set(key, hit.value)
      }
      if (missing.length === 0) return out
      const seen = epoch
      const loaded = await store.getGroups(projectId, missing)
      for (const r of missing) {
        const key = `${r.groupTypeIndex}:${r.groupKey}`
        if (seen === epoch) groups.set(`${projectId}:${key}`, loaded.get(key), now)
        if (loaded.has(key)) out.set(key, loaded.get(key)!)
      }
      return out
    },
    async ensurePersons(projectId, distinctIds) {
      try {
        return await store.ensurePersons(projectId, distinctIds)
      } finally {
        forgetPersons(projectId, distinctIds)
      }
    },
    async upsertPersons(projectId, list) {
      try {
        return await store.upsertPersons(projectId, list)
      } finally {
        forgetPersons(projectId, list.map((p) => p.distinctId))
      }
    },
    async upsertGroups(projectId, list) {
      try {
        return await store.upsertGroups(projectId, list)
      } finally {
        epoch++
        for (const g of list) groups.delete(`${projectId}:${g.groupTypeIndex}:${g.groupKey}`)
      }
    },
  }
  /**
   * Loads a project's most recently created persons into the cache, a chunk at a time, until the
   * cache is full, the store has no more, or `shouldStop` says so. Entries already cached are left
   * alone (as fresh, and kept in their LRU place); a chunk read across a write is read again, so a
   * write during warm-up never leaves a stale entry. Resolves with the number of entries added.
   */
  async function warm(projectId: number, o: { withCohorts: boolean; chunk: number; shouldStop: () => boolean }): Promise<number> {
    let before: number | null = null
    let added = 0
    for (let retries = 0; persons.size < opts.maxEntries && !o.shouldStop(); ) {
      const seen = epoch
      const page = await store.scanPersons(projectId, { beforePersonId: before, limit: o.chunk, withCohorts: o.withCohorts })
      if (o.shouldStop()) break
      if (seen !== epoch && retries++ < 3) continue
      const now = clock.now()
      if (seen === epoch) {
        for (const { distinctId, person } of page.persons) {
          const key = personKey(projectId, o.withCohorts, distinctId)
          if (persons.size >= opts.maxEntries) break
          if (persons.has(key)) continue
          persons.set(key, person, now)
          added++
        }
      }
      retries = 0
      if (page.next === null) break
      before = page.next
      // Let requests run between chunks: warm-up shares the event loop (and PGlite) with them.
      await new Promise((resolve) => setImmediate(resolve))
    }
    stats.warmed += added
    return added
  }

  return {
    ...cached,
    warm,
    /**
     * The cached person of a distinct id without waiting: `{value}` on a hit (value undefined for a
     * known-absent id), undefined when the store has to be asked.
     */
    peekPerson(projectId: number, withCohorts: boolean, distinctId: string): { value: StoredPerson | undefined } | undefined {
      const hit = persons.get(personKey(projectId, withCohorts, distinctId), clock.now())
      if (hit === undefined) return undefined
      stats.hits++
      return hit
    },
    /** Hits and misses of person reads since start, and entries added by warm-up. */
    stats: () => ({ ...stats, entries: persons.size + groups.size }),
    /**
     * Drops the cached persons of these distinct ids (the ingestion persons step calls it after each
     * committed batch, for every distinct id whose person changed, moved or was merged away).
     */
    invalidatePersons(projectId: number, distinctIds: readonly string[]) {
      forgetPersons(projectId, distinctIds)
    },
    /** Drops the cached groups `(typeIndex, key)` (the ingestion step calls it for the groups it changed). */
    invalidateGroups(projectId: number, refs: ReadonlyArray<{ typeIndex: number; key: string }>) {
      epoch++
      for (const r of refs) groups.delete(`${projectId}:${r.typeIndex}:${r.key}`)
    },
    /** Drops every cached person and group of a project. */
    invalidateProject(projectId: number) {
      epoch++
      persons.deleteWhere(`${projectId}:`)
      groups.deleteWhere(`${projectId}:`)
    },
    get size() {
      return persons.size + groups.size
    },
  }
}
