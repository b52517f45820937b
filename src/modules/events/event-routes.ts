import type { FastifyInstance, FastifyRequest } from 'fastify'
import { cleanText, parseDate } from '../../domain/events/index.ts'
import { AppError, validationError } from '../../shared/errors.ts'
import { toEventJson } from './event-json.ts'
import type { EventListQuery, EventReadStore } from './event-read-store.ts'
import { readPropertyFilters } from './event-property-filters.ts'
import type { PersonStore } from '../persons/person-store.ts'

/** How the events API finds the persons of a page: one look-up for all its distinct ids. */
export type EventPersonLookup = Pick<PersonStore, 'findByDistinctIds'>

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1000
/** DuckDB takes a BIGINT offset; anything past this many events is simply an empty page. */
const MAX_OFFSET = 1_000_000_000_000
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i

/**
 * `GET /api/projects/:project_id/events/` (newest first; filters `event`, `distinct_id`, `after`,
 * `before`, `properties`; `limit`/`offset`) answering PostHog's `{next, results}`. Without `offset`,
 * `next` is a cursor (`before` = the last event's timestamp, plus `before_uuid` so that events
 * sharing that timestamp are not skipped); with `offset` it is the next offset.
 * `GET .../events/:id/` returns one event or 404. Register inside the private scope.
 */
export async function eventRoutes(app: FastifyInstance, opts: { events: EventReadStore; persons: EventPersonLookup }): Promise<void> {
  const list = async (req: FastifyRequest) => {
    const q = readListQuery(req)
    const rows = await opts.events.list({ ...q, limit: q.limit + 1 })
    const page = rows.slice(0, q.limit)
    // One look-up of the page's persons, by distinct id (PostHog's serializer context `people`).
    const persons = await opts.persons.findByDistinctIds(req.project.id, [...new Set(page.map((r) => r.distinctId))])
    const results = page.map((r) => toEventJson(r, persons.get(r.distinctId)))
    let next: string | null = null
    if (rows.length > q.limit) {
      const query = req.query as Record<string, unknown>
      const last = results[results.length - 1]!
      next = 'offset' in query
        ? nextUrl(req, { offset: String(q.offset + q.limit), limit: String(q.limit) })
        : nextUrl(req, { before: last.timestamp, before_uuid: last.id })
    }
    return { next, results }
  }
  const get = async (req: FastifyRequest) => {
    const id = (req.params as { id: string }).id
    const row = UUID.test(id) ? await opts.events.get(req.project.id, id) : null
    if (!row) throw new AppError('not_found', 'Not found.')
    const persons = await opts.persons.findByDistinctIds(req.project.id, [row.distinctId])
    return toEventJson(row, persons.get(row.distinctId))
  }
  for (const url of ['/api/projects/:project_id/events/', '/api/projects/:project_id/events']) app.get(url, list)
  for (const url of ['/api/projects/:project_id/events/:id/', '/api/projects/:project_id/events/:id']) app.get(url, get)
}

function readListQuery(req: FastifyRequest): EventListQuery {
  const filters = readEventFilters(req)
  const q = req.query as Record<string, unknown>
  const int = (name: string, fallback: number, max: number): number => {
    const v = queryText(q, name)
    if (v === undefined || v === '') return fallback
    if (!/^\d{1,15}$/.test(v.trim())) throw validationError(name, `${name} must be a whole number from 0 to ${max}.`)
    const n = Number(v)
    if (n > max) throw validationError(name, `${name} must be a whole number from 0 to ${max}.`)
    return n
  }
  const beforeUuid = queryText(q, 'before_uuid')
  if (beforeUuid !== undefined && !UUID.test(beforeUuid)) throw validationError('before_uuid', 'before_uuid must be a UUID.')
  const limit = int('limit', DEFAULT_LIMIT, Number.MAX_SAFE_INTEGER)
  return {
    ...filters,
    beforeUuid,
    limit: Math.min(limit === 0 ? DEFAULT_LIMIT : limit, MAX_LIMIT),
    offset: int('offset', 0, MAX_OFFSET),
  }
}

/** A query-string parameter given at most once, cleaned (a repeated one is a 400 naming it). */
function queryText(q: Record<string, unknown>, name: string): string | undefined {
  const v = q[name]
  if (v === undefined) return undefined
  if (typeof v !== 'string') throw validationError(name, `${name} must be given once.`)
  return cleanText(v)
}

/**
 * The events API's filters (`event`, `distinct_id`, `after`, `before`, `properties`) from a request's
 * query string, checked: the list and the export read them alike.
 */
export function readEventFilters(req: FastifyRequest): Pick<EventListQuery, 'projectId' | 'event' | 'distinctId' | 'after' | 'before' | 'properties'> {
  const q = req.query as Record<string, unknown>
  const date = (name: string): string | undefined => {
    const v = queryText(q, name)
    if (v === undefined || v === '') return undefined
    return readBound(v, name)
  }
  return {
    projectId: req.project.id,
    event: queryText(q, 'event') || undefined,
    distinctId: queryText(q, 'distinct_id') || undefined,
    after: date('after'),
    before: date('before'),
    properties: readPropertyFilters(queryText(q, 'properties')),
  }
}

const FIRST_MS = -62_135_596_800_000 // 0001-01-01T00:00:00Z
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)
const SUB_MS = /^\s*\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}[.,]\d{3}(\d{1,3})/

/**
 * An `after`/`before` bound as the store's canonical text, `YYYY-MM-DDTHH:MM:SS.ffffffZ` (microseconds
 * kept, so the `next` cursor loses nothing). Accepts what capture accepts for timestamps (ISO-8601 /
 * RFC 3339, epoch digits, RFC 2822, `Y/M/D`) in years 1 to 9999; anything else is a 400 naming the
 * field, never a cast error in the store.
 */
export function readBound(v: string, name: string): string {
  const ms = parseDate(v)
  if (ms === null || !(ms >= FIRST_MS && ms <= LAST_MS)) {
    throw validationError(name, `${name} must be an ISO-8601 date-time between years 1 and 9999.`)
  }
  const micros = SUB_MS.exec(v)?.[1]?.padEnd(3, '0') ?? '000'
  return `${new Date(ms).toISOString().slice(0, 23)}${micros}Z`
}

function nextUrl(req: FastifyRequest, set: Record<string, string>): string {
  const url = new URL(req.url, `${req.protocol}://${req.headers.host ?? 'localhost'}`)
  for (const [k, v] of Object.entries(set)) url.searchParams.set(k, v)
  return url.toString()
}
