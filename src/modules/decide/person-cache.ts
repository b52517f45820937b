import type { GroupRef, PersonDataReader, PersonDataWriter, StoredPerson } from './person-data-store.ts'

export interface PersonCacheOptions {
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
  const persons = createLru<StoredPerson>(opts.maxEntries, opts.ttlMs)
  const groups = createLru<Record<string, unknown>>(opts.maxEntries, opts.ttlMs)
  const personKey = (projectId: number, withCohorts: boolean, distinctId: string) => `${projectId}:${withCohorts ? 1 : 0}:${distinctId}`
  // Bumped by every write: a read that was in flight across a write does not cache what it saw.
  let epoch = 0
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
      const now = Date.now()
      const withCohorts = o.withCohorts ?? false
      const out = new Map<string, StoredPerson>()
      const missing: string[] = []
      for (const id of distinctIds) {
        const hit = persons.get(personKey(projectId, withCohorts, id), now)
        if (hit === undefined) missing.push(id)
        else if (hit.value !== undefined) out.set(id, hit.value)
      }
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
      const now = Date.now()
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
  return {
    ...cached,
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
