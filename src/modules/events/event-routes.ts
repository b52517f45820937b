import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError, validationError } from '../../shared/errors.ts'
import { toEventJson } from './event-json.ts'
import type { EventListQuery, EventPropertyFilter, EventReadStore } from './event-read-store.ts'

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1000
const OPERATORS = new Set(['exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte', 'is_set', 'is_not_set'])
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i

/**
 * `GET /api/projects/:project_id/events/` (newest first; filters `event`, `distinct_id`, `after`,
 * `before`, `properties`; `limit`/`offset`) answering PostHog's `{next, results}`. Without `offset`,
 * `next` is a cursor (`before` = the last event's timestamp, plus `before_uuid` so that events
 * sharing that timestamp are not skipped); with `offset` it is the next offset.
 * `GET .../events/:id/` returns one event or 404. Register inside the private scope.
 */
export async function eventRoutes(app: FastifyInstance, opts: { events: EventReadStore }): Promise<void> {
  const list = async (req: FastifyRequest) => {
    const q = readListQuery(req)
    const rows = await opts.events.list({ ...q, limit: q.limit + 1 })
    const results = rows.slice(0, q.limit).map(toEventJson)
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
    return toEventJson(row)
  }
  for (const url of ['/api/projects/:project_id/events/', '/api/projects/:project_id/events']) app.get(url, list)
  for (const url of ['/api/projects/:project_id/events/:id/', '/api/projects/:project_id/events/:id']) app.get(url, get)
}

function readListQuery(req: FastifyRequest): EventListQuery {
  const q = req.query as Record<string, unknown>
  const str = (name: string): string | undefined => {
    const v = q[name]
    if (v === undefined) return undefined
    if (typeof v !== 'string') throw validationError(name, `${name} must be given once.`)
    return v
  }
  const date = (name: string): string | undefined => {
    const v = str(name)
    if (v === undefined || v === '') return undefined
    if (Number.isNaN(Date.parse(v))) throw validationError(name, `${name} must be an ISO-8601 date-time.`)
    return v
  }
  const int = (name: string, fallback: number): number => {
    const n = Number(str(name))
    return Number.isInteger(n) && n >= 0 ? n : fallback
  }
  const beforeUuid = str('before_uuid')
  if (beforeUuid !== undefined && !UUID.test(beforeUuid)) throw validationError('before_uuid', 'before_uuid must be a UUID.')
  const limit = int('limit', DEFAULT_LIMIT)
  return {
    projectId: req.project.id,
    event: str('event') || undefined,
    distinctId: str('distinct_id') || undefined,
    after: date('after'),
    before: date('before'),
    beforeUuid,
    properties: readPropertyFilters(str('properties')),
    limit: Math.min(limit === 0 ? DEFAULT_LIMIT : limit, MAX_LIMIT),
    offset: int('offset', 0),
  }
}

/** `properties` is a JSON list of `{key, value, operator, type}`; only event properties can match here. */
function readPropertyFilters(raw: string | undefined): EventPropertyFilter[] {
  if (raw === undefined || raw === '') return []
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw validationError('properties', 'Properties are unparsable!')
  }
  if (!Array.isArray(parsed)) throw validationError('properties', 'properties must be a JSON list of property filters.')
  return parsed.map((f: unknown) => {
    const filter = f as Record<string, unknown>
    if (typeof filter !== 'object' || filter === null || typeof filter.key !== 'string') {
      throw validationError('properties', 'each property filter needs a string key.')
    }
    if (filter.type !== undefined && filter.type !== 'event') {
      throw validationError('properties', `property filters of type "${String(filter.type)}" are not supported on events yet.`)
    }
    const operator = typeof filter.operator === 'string' ? filter.operator : 'exact'
    if (!OPERATORS.has(operator)) throw validationError('properties', `unsupported operator "${operator}".`)
    return { key: filter.key, value: filter.value, operator }
  })
}

function nextUrl(req: FastifyRequest, set: Record<string, string>): string {
  const url = new URL(req.url, `${req.protocol}://${req.headers.host ?? 'localhost'}`)
  for (const [k, v] of Object.entries(set)) url.searchParams.set(k, v)
  return url.toString()
}
