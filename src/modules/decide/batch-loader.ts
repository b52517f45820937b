/**
 * Coalesces single-key loads made during one event-loop turn into one `loadMany` call (PostHog's
 * set-based principle: a burst of /decide requests costs one `= ANY($1)` query, not one each).
 * A failed batch rejects every waiter of that batch.
 */
export function createBatchLoader<K, V>(loadMany: (keys: K[]) => Promise<Map<K, V>>, maxBatch = 1000) {
  let pending: Map<K, Array<{ resolve: (v: V | undefined) => void; reject: (e: unknown) => void }>> | null = null

  function flush() {
    const batch = pending
    if (batch === null) return
    pending = null
    loadMany([...batch.keys()]).then(
      (found) => {
        for (const [key, waiters] of batch) for (const w of waiters) w.resolve(found.get(key))
      },
      (err) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(err)
      },
    )
  }

  return {
    load(key: K): Promise<V | undefined> {
      return new Promise((resolve, reject) => {
        if (pending === null) {
          pending = new Map()
          setImmediate(flush)
        }
        const waiters = pending.get(key)
        if (waiters) waiters.push({ resolve, reject })
        else pending.set(key, [{ resolve, reject }])
        if (pending.size >= maxBatch) flush()
      })
    },
  }
}
