/** The time, injected where logic depends on it (cache expiry, negative caches) so tests need not sleep. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock that moves only when told: for tests. */
export function manualClock(start = 0): Clock & { advance(ms: number): void } {
  let t = start
  return { now: () => t, advance: (ms) => void (t += ms) }
}
