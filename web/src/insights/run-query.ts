import { useQuery } from '@tanstack/react-query'
import { api, ApiError } from '../api.ts'

/**
 * Queries this tab runs at once: the server admits 2 per user (TALLY_QUERY_CONCURRENCY_PER_USER) and
 * answers 429 past that, so a page of many queries (Web analytics has 8) sends them 2 at a time, in
 * the order it asked for them, instead of most of them failing.
 */
const IN_FLIGHT = 2
let running = 0
const waiting: (() => void)[] = []

async function withSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= IN_FLIGHT) await new Promise<void>((resolve) => waiting.push(resolve))
  else running++
  try {
    return await fn()
  } finally {
    const next = waiting.shift()
    if (next) next()
    else running--
  }
}

/** 429 (another tab or user holds the slots, or the rate limit) is worth retrying after its Retry-After; other errors are not. */
const MAX_RETRIES = 8
export const retryQuery = (failures: number, err: unknown) => err instanceof ApiError && err.status === 429 && failures < MAX_RETRIES
export const retryDelay = (failures: number, err: unknown) =>
  err instanceof ApiError && err.retryAfter !== null ? err.retryAfter * 1000 : Math.min(4000, 250 * 2 ** failures)

/** Runs a PostHog query (`POST /query/`); cached per query by TanStack Query. */
export function useQueryResult(base: string, query: Record<string, unknown> | null, opts: { force?: number } = {}) {
  return useQuery({
    queryKey: ['query', base, query, opts.force ?? 0],
    queryFn: () => withSlot(() => api<Record<string, unknown>>(`${base}/query/`, { method: 'POST', body: { query, ...(opts.force ? { refresh: 'force_blocking' } : {}) } })),
    enabled: query !== null,
    retry: retryQuery,
    retryDelay,
    staleTime: 60_000,
  })
}
