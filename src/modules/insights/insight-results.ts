import { validationError } from '../../shared/errors.ts'
import type { Project } from '../projects/project-types.ts'
import type { QueryService } from '../query/query-service.ts'
import type { InsightStore } from './insight-store.ts'
import type { Insight, InsightCache } from './insight-types.ts'
import { applyDashboardFilters, hasDashboardFilters, type DashboardFilters } from './dashboard-filters.ts'

/** PostHog's `refresh` modes of insight and dashboard reads (`async` ones compute while the client waits here). */
export const REFRESH_MODES = ['blocking', 'force_blocking', 'async', 'force_async', 'lazy_async', 'async_except_on_cache_miss', 'force_cache'] as const
export type RefreshMode = (typeof REFRESH_MODES)[number]

/** What an insight shows of its query's answer. */
export interface InsightResult {
  response: Record<string, unknown> | null
  lastRefresh: Date | null
  isCached: boolean
}

const HOUR = 3_600_000
/** How long a result counts as fresh for `blocking` (PostHog recomputes hourly data sooner). */
const FRESH_MS = { hour: 15 * 60_000, other: 6 * HOUR }
/** `lazy_async` accepts older results. */
const LAZY_MS = 24 * HOUR

/**
 * The `refresh` query parameter: PostHog's modes, plus legacy `true` (always compute) and `false`
 * (cache only). Absent: `force_cache`, PostHog's default for insight reads (never computes).
 */
export function readRefresh(v: unknown): RefreshMode {
  if (v === undefined || v === 'false' || v === false) return 'force_cache'
  if (v === 'true' || v === true || v === '1') return 'force_blocking'
  if (typeof v !== 'string' || !(REFRESH_MODES as readonly string[]).includes(v)) throw validationError('refresh', `"${String(v)}" is not a valid choice.`, 'invalid_choice')
  return v as RefreshMode
}

function intervalOf(query: Record<string, unknown>): string | undefined {
  const source = (query.source ?? query) as Record<string, unknown>
  return typeof source.interval === 'string' ? source.interval : undefined
}

/** Results of dashboard-filtered queries kept in memory (they would otherwise evict the insight's own). */
const FILTERED_CACHE_SIZE = 1000

/** Computes or serves the cached result of insights, as the refresh mode asks. */
export function createInsightResults(store: InsightStore, queries: QueryService, now: () => Date = () => new Date()) {
  const filtered = new Map<string, InsightCache>()
  return {
    /** Throws a 400 for an insight query whose kind Tally does not compute (`constructor`, a typo...). */
    checkQuery(query: unknown): void {
      queries.checkKind(query)
    },

    /**
     * The insight's result; with `filters` (a dashboard's, for a tile) the query they give, whose
     * result is cached apart from the insight's own. `userId`: who asks, whose query concurrency a
     * computation counts against.
     */
    async resultOf(project: Project, insight: Insight, mode: RefreshMode, filters?: DashboardFilters, userId?: number): Promise<InsightResult> {
      if (!insight.query) return { response: null, lastRefresh: null, isCached: false }
      const overridden = filters !== undefined && hasDashboardFilters(filters)
      const query = overridden ? applyDashboardFilters(insight.query, filters) : insight.query
      const key = queries.cacheKey(project, query)
      const stored = overridden ? (filtered.get(key) ?? null) : insight.cache
      const cached: InsightCache | null = stored && stored.key === key ? stored : null
      const age = cached ? now().getTime() - cached.computedAt.getTime() : Infinity
      const fresh = mode === 'lazy_async' ? LAZY_MS : intervalOf(query) === 'hour' ? FRESH_MS.hour : FRESH_MS.other
      if (cached && (mode === 'force_cache' || (mode !== 'force_blocking' && age < fresh))) {
        return { response: cached.response, lastRefresh: cached.computedAt, isCached: true }
      }
      if (mode === 'force_cache') return { response: null, lastRefresh: null, isCached: false }
      const response = await queries.run(project, query, { userId })
      const computedAt = new Date(String(response.last_refresh))
      if (overridden) {
        filtered.delete(key)
        filtered.set(key, { key, response, computedAt })
        if (filtered.size > FILTERED_CACHE_SIZE) filtered.delete(filtered.keys().next().value!)
      } else {
        await store.saveResult(project.id, insight.id, { key, response, computedAt })
      }
      return { response, lastRefresh: computedAt, isCached: false }
    },
  }
}

export type InsightResults = ReturnType<typeof createInsightResults>
