import type { Clock } from '../../shared/clock.ts'

/** How many failed sign-ins a client address, and an e-mail address, may have within the window. */
export interface ThrottleLimits {
  maxFailures: number
  windowMs: number
}

const MAX_KEYS = 100_000

/**
 * Failed sign-ins counted per key (`ip:...`, `email:...`) over a sliding window, in memory. A key
 * with `maxFailures` failures inside the window is refused until the oldest of them leaves it.
 * The map is bounded: past MAX_KEYS keys the ones whose failures all left the window are dropped,
 * and if that is not enough the oldest keys go (an attacker spraying addresses loses history first).
 */
export function createLoginThrottle(limits: ThrottleLimits, clock: Clock) {
  const failures = new Map<string, number[]>()

  function recent(key: string): number[] {
    const since = clock.now() - limits.windowMs
    const times = (failures.get(key) ?? []).filter((t) => t > since)
    if (times.length) failures.set(key, times)
    else failures.delete(key)
    return times
  }

  function prune(): void {
    for (const key of failures.keys()) recent(key)
    for (const key of failures.keys()) {
      if (failures.size < MAX_KEYS) break
      failures.delete(key)
    }
  }

  return {
    /** Seconds until the first of `keys` may try again, or 0 when none is throttled. */
    retryAfterSeconds(keys: string[]): number {
      let waitMs = 0
      for (const key of keys) {
        const times = recent(key)
        if (times.length >= limits.maxFailures) {
          const freeAt = times[times.length - limits.maxFailures] + limits.windowMs
          waitMs = Math.max(waitMs, freeAt - clock.now())
        }
      }
      return waitMs > 0 ? Math.ceil(waitMs / 1000) : 0
    },
    recordFailure(keys: string[]): void {
      if (failures.size >= MAX_KEYS) prune()
      for (const key of keys) failures.set(key, [...recent(key), clock.now()].slice(-limits.maxFailures))
    },
    /** A successful sign-in clears the e-mail's count (not the address's: one address, many accounts). */
    clear(key: string): void {
      failures.delete(key)
    },
  }
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>
