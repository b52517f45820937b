import type { FastifyRequest } from 'fastify'
import type { Page } from '../shared/page.ts'

const DEFAULT_LIMIT = 100

/**
 * DRF LimitOffsetPagination's reading of `limit`/`offset`: bad values fall back to 100 and 0, and so
 * do integers past 2^53 (1e20 once reached the store's BIGINT and failed there).
 */
export function readPage(req: FastifyRequest): Page {
  const q = req.query as Record<string, unknown>
  const limit = Number(q?.limit)
  const offset = Number(q?.offset)
  return {
    limit: Number.isSafeInteger(limit) && limit > 0 ? limit : DEFAULT_LIMIT,
    offset: Number.isSafeInteger(offset) && offset > 0 ? offset : 0,
  }
}

/** The absolute URL of this request with `limit`/`offset` replaced, query keys in alphabetical order. */
function pageUrl(req: FastifyRequest, set: Record<string, number | null>): string {
  const url = new URL(req.url, `${req.protocol}://${req.headers.host ?? 'localhost'}`)
  for (const [k, v] of Object.entries(set)) {
    if (v === null) url.searchParams.delete(k)
    else url.searchParams.set(k, String(v))
  }
  url.searchParams.sort()
  return url.toString()
}

/** PostHog's list envelope `{count, next, previous, results}` with absolute next/previous links. */
export function paginate<T>(req: FastifyRequest, page: Page, count: number, results: T[]) {
  const { limit, offset } = page
  const next = offset + limit >= count ? null : pageUrl(req, { limit, offset: offset + limit })
  const previous = offset <= 0 ? null : pageUrl(req, { limit, offset: offset - limit <= 0 ? null : offset - limit })
  return { count, next, previous, results }
}
