import type { FastifyInstance } from 'fastify'
import { pathId, readBody } from '../../http/drf-fields.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import { addRoute } from '../../http/route-paths.ts'
import { parseDestinationBody } from './destination-schemas.ts'
import type { DestinationService } from './destination-service.ts'
import type { Destination } from './destination-types.ts'
import type { OutboxDelivery } from './outbox-store.ts'

export function toDestinationJson(d: Destination) {
  return {
    id: d.id,
    name: d.name,
    url: d.url,
    enabled: d.enabled,
    headers: d.headers,
    filters: { events: d.filters.events ?? [], actions: d.filters.actions ?? [], properties: d.filters.properties ?? [] },
    body_template: d.bodyTemplate,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
  }
}

function toDeliveryJson(m: OutboxDelivery) {
  return {
    id: m.id,
    idempotency_key: m.idempotencyKey,
    status: m.status,
    attempts: m.attempts,
    response_status: m.lastStatus,
    error: m.lastError,
    created_at: m.createdAt.toISOString(),
    sent_at: m.sentAt?.toISOString() ?? null,
  }
}

/** `/api/projects/:project_id/destinations/`: webhook destinations (any member, as PostHog's destinations). */
export async function destinationRoutes(app: FastifyInstance, opts: { destinations: DestinationService }) {
  const base = '/api/projects/:project_id/destinations/'
  const { destinations } = opts
  addRoute(app, 'GET', base, async (req) => {
    const page = readPage(req)
    const { count, rows } = await destinations.list(req.project, page)
    return paginate(req, page, count, rows.map(toDestinationJson))
  })
  addRoute(app, 'POST', base, async (req, reply) => {
    const input = parseDestinationBody(readBody(req.body), true)
    return reply.code(201).send(toDestinationJson(await destinations.create(req.project, input)))
  })
  addRoute(app, 'GET', `${base}:id/`, async (req) => toDestinationJson(await destinations.get(req.project, pathId(req))))
  addRoute(app, 'PATCH', `${base}:id/`, async (req) => {
    return toDestinationJson(await destinations.update(req.project, pathId(req), parseDestinationBody(readBody(req.body), false)))
  })
  addRoute(app, 'DELETE', `${base}:id/`, async (req, reply) => {
    await destinations.remove(req.project, pathId(req))
    return reply.code(204).send()
  })
  addRoute(app, 'POST', `${base}:id/test/`, async (req) => {
    const r = await destinations.testSend(req.project, pathId(req))
    return { success: r.error === null, status: r.status, error: r.error, body: r.body }
  })
  addRoute(app, 'GET', `${base}:id/deliveries/`, async (req) => ({
    results: (await destinations.deliveries(req.project, pathId(req), 100)).map(toDeliveryJson),
  }))
  addRoute(app, 'POST', `${base}:id/replay/`, async (req) => {
    return { replayed: await destinations.replayFailed(req.project, pathId(req)) }
  })
}
