import { useQuery } from '@tanstack/react-query'
import { api } from '../api.ts'

/** Runs a PostHog query (`POST /query/`); cached per query by TanStack Query. */
export function useQueryResult(base: string, query: Record<string, unknown> | null, opts: { force?: number } = {}) {
  return useQuery({
    queryKey: ['query', base, query, opts.force ?? 0],
    queryFn: () => api<Record<string, unknown>>(`${base}/query/`, { method: 'POST', body: { query, ...(opts.force ? { refresh: 'force_blocking' } : {}) } }),
    enabled: query !== null,
    retry: false,
    staleTime: 60_000,
  })
}
