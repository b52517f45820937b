import type { FastifyInstance, FastifyRequest } from 'fastify'
import { readBody, readBool } from '../../http/drf-fields.ts'
import { readPage } from '../../http/pagination.ts'
import { addRoute } from '../../http/route-paths.ts'
import { AppError } from '../../shared/errors.ts'
import { queryText, readDeleteProperty, readPersonListQuery, readPersonUpdate, readUpdateProperty } from './person-schemas.ts'
import type { PersonService } from './person-service.ts'
import { toPersonDetailJson, toPersonJson } from './person-json.ts'

const MAX_LIMIT = 1000

type Query = Record<string, unknown>

/** The absolute URL of this request with `offset`/`limit` set (`offset` left out when 0). */
export function pageLink(req: FastifyRequest, offset: number, limit: number): string {
  const url = new URL(req.url, `${req.protocol}://${req.headers.host ?? 'localhost'}`)
  url.searchParams.set('limit', String(limit))
  if (offset > 0) url.searchParams.set('offset', String(offset))
  else url.searchParams.delete('offset')
  return url.toString()
}

/** A flag given by its presence (`?delete_events`) or a DRF boolean (`?delete_events=false`). */
function queryFlag(q: Query, name: string): boolean {
  const v = queryText(q, name)
  return v === undefined ? false : v === '' ? true : readBool(v, name)
}

/**
 * PostHog's persons API under `/api/projects/:project_id/persons/` (posthog/api/person.py):
 * list (`distinct_id`, `email`, `search`, `properties`; `limit`/`offset` with `next`/`previous`
 * links, `count` with `include_total`), `values/`, retrieve by pk or uuid, PATCH / `update_property/`
 * / `delete_property/` (202 / 201: applied through the pipeline), DELETE (`?delete_events=true`
 * also deletes the person's events, `?delete_recordings=true` their recordings). Persons are created by events, so POST is 405.
 */
export async function personRoutes(app: FastifyInstance, opts: { persons: PersonService }) {
  const base = '/api/projects/:project_id/persons/'
  const { persons } = opts
  const ref = (req: FastifyRequest) => (req.params as { id: string }).id

  addRoute(app, 'GET', base, async (req) => {
    const q = req.query as Query
    const query = readPersonListQuery(q)
    const page = readPage(req)
    page.limit = Math.min(page.limit, MAX_LIMIT)
    const { persons: rows, hasMore } = await persons.list(req.project, query, page)
    const count = queryText(q, 'include_total') !== undefined ? await persons.count(req.project, query) : undefined
    return {
      results: rows.map(toPersonJson),
      next: hasMore ? pageLink(req, page.offset + page.limit, page.limit) : null,
      previous: page.offset > 0 ? pageLink(req, Math.max(0, page.offset - page.limit), page.limit) : null,
      ...(count !== undefined && { count }),
    }
  })
  addRoute(app, 'POST', base, async () => {
    throw new AppError(
      'method_not_allowed',
      'Creating persons via this API is not allowed. Please create persons by sending an $identify event. See https://posthog.com/docs/product-analytics/identify for details.',
    )
  })
  addRoute(app, 'GET', `${base}values/`, async (req) => {
    const q = req.query as Query
    const key = queryText(q, 'key')
    if (!key) return [] // PostHog answers an empty list without a key
    const values = await persons.values(req.project, key, queryText(q, 'value') || undefined)
    return values.map((v) => ({ name: v.value, count: v.count }))
  })
  addRoute(app, 'GET', `${base}:id/`, async (req) => toPersonDetailJson(await persons.get(req.project, ref(req))))
  for (const method of ['PATCH', 'PUT'] as const) {
    addRoute(app, method, `${base}:id/`, async (req, reply) => {
      const properties = readPersonUpdate(readBody(req.body))
      await persons.setProperties(req.project, ref(req), properties)
      return reply.code(202).send()
    })
  }
  addRoute(app, 'POST', `${base}:id/update_property/`, async (req, reply) => {
    const { key, value } = readUpdateProperty(readBody(req.body))
    await persons.setProperties(req.project, ref(req), { [key]: value })
    return reply.code(202).send()
  })
  addRoute(app, 'POST', `${base}:id/delete_property/`, async (req, reply) => {
    const key = readDeleteProperty(readBody(req.body))
    await persons.deleteProperty(req.project, ref(req), key)
    return reply.code(201).send({ success: true })
  })
  addRoute(app, 'DELETE', `${base}:id/`, async (req, reply) => {
    const deleteEvents = queryFlag(req.query as Query, 'delete_events')
    const deleteRecordings = queryFlag(req.query as Query, 'delete_recordings')
    await persons.delete(req.project, ref(req), { deleteEvents, deleteRecordings })
    return reply.code(202).send()
  })
}
