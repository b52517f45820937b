import { AppError } from '../../shared/errors.ts'
import { systemClock, type Clock } from '../../shared/clock.ts'

export interface QueryAdmissionLimits {
  /** Queries computing at once in this process. */
  concurrency: number
  /** Queries computing at once for one project. */
  perProject: number
  /** Queries computing at once for one user. */
  perUser: number
  /** Queries one user may start per minute on the query API (0: no limit). */
  ratePerUser: number
}

/** Who asks: the project always; the user when a person asks (the query API, an insight's refresh). */
export interface QueryAsker {
  projectId: number
  userId: number | null
  /** Counts against the user's rate (the query API); insights and dashboards only against concurrency. */
  rateLimited?: boolean
}

/** Retry-After of a 429 for a full concurrency limit: a query's slot frees when any one ends. */
const CONCURRENCY_RETRY_SECONDS = 1

/**
 * Who may start a query now. Concurrency is limited per user, per project and per process, so one
 * member running heavy queries holds at most `perUser` slots and the others (the project's owner
 * among them) still get theirs; past a limit the answer is 429 `throttled` with Retry-After, as
 * PostHog's query API answers its concurrency and rate limits. The rate is a token bucket per user
 * of `ratePerUser` a minute (as PostHog's `ClickHouseBurstRateThrottle`, 240/minute): a burst of
 * that many, then one per 60/`ratePerUser` s.
 */
export function createQueryAdmission(limits: QueryAdmissionLimits, clock: Clock = systemClock) {
  const running = new Map<string, number>()
  let total = 0
  const buckets = new Map<number, { tokens: number; at: number }>()

  const countOf = (key: string) => running.get(key) ?? 0
  function add(key: string, by: number): void {
    const n = countOf(key) + by
    if (n === 0) running.delete(key)
    else running.set(key, n)
  }

  /** Takes one token of the user's bucket, or throws 429 with the seconds until the next one. */
  function takeToken(userId: number): void {
    const perMs = limits.ratePerUser / 60_000
    const now = clock.now()
    const b = buckets.get(userId) ?? { tokens: limits.ratePerUser, at: now }
    const tokens = Math.min(limits.ratePerUser, b.tokens + (now - b.at) * perMs)
    if (tokens < 1) {
      buckets.set(userId, { tokens, at: now })
      const wait = Math.max(1, Math.ceil((1 - tokens) / perMs / 1000))
      throw new AppError('rate_limited', `Request was throttled. Expected available in ${wait} seconds.`, null, { retryAfterSeconds: wait })
    }
    buckets.set(userId, { tokens: tokens - 1, at: now })
    // A full bucket is the same as none: forget users who have not queried for a while.
    if (buckets.size > 10_000) {
      for (const [id, v] of buckets) if (v.tokens + (now - v.at) * perMs >= limits.ratePerUser) buckets.delete(id)
    }
  }

  function full(what: string, limit: number): AppError {
    return new AppError('rate_limited', `Too many queries are running ${what} (${limit} at most): try again shortly.`, null, {
      retryAfterSeconds: CONCURRENCY_RETRY_SECONDS,
    })
  }

  return {
    /**
     * Admits one query of `asker`, or throws 429 `rate_limited` (with `retryAfterSeconds`). The
     * returned function releases its slots; call it once, when the query has ended however it ended.
     */
    admit(asker: QueryAsker): () => void {
      const user = asker.userId === null ? null : `u${asker.userId}`
      const project = `p${asker.projectId}`
      if (user && countOf(user) >= limits.perUser) throw full('for this user', limits.perUser)
      if (countOf(project) >= limits.perProject) throw full('in this project', limits.perProject)
      if (total >= limits.concurrency) throw full('on this server', limits.concurrency)
      if (asker.rateLimited && asker.userId !== null && limits.ratePerUser > 0) takeToken(asker.userId)
      total++
      add(project, 1)
      if (user) add(user, 1)
      let released = false
      return () => {
        if (released) return
        released = true
        total--
        add(project, -1)
        if (user) add(user, -1)
      }
    },
    /** Queries computing now (a gauge for /metrics and tests). */
    running: () => total,
  }
}

export type QueryAdmission = ReturnType<typeof createQueryAdmission>
