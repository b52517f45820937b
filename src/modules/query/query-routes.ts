import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { readBody } from '../../http/drf-fields.ts'
import { addRoute } from '../../http/route-paths.ts'
import { validationError } from '../../shared/errors.ts'
import type { QueryService } from './query-service.ts'

const REFRESH = ['blocking', 'force_blocking', 'async', 'force_async', 'lazy_async', 'force_cache', true, false]

/**
 * `POST /api/projects/:project_id/query/` (and `/api/environments/...`): `{query: {kind, ...}, refresh?}`.
 * Ad-hoc queries are always computed (there is no cache for them, so every refresh mode computes).
 * A client that goes away cancels its query in the event store.
 */
export async function queryRoutes(app: FastifyInstance, opts: { queries: QueryService }) {
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const body = readBody(req.body)
    if (body.refresh !== undefined && !REFRESH.includes(body.refresh as string | boolean)) {
      throw validationError('refresh', `"${String(body.refresh)}" is not a valid choice.`, 'invalid_choice')
    }
    const cancel = new AbortController()
    const onClose = () => {
      if (!reply.raw.writableFinished) cancel.abort()
    }
    reply.raw.once('close', onClose)
    try {
      return await opts.queries.run(req.project, body.query, { signal: cancel.signal, userId: req.user.id, rateLimited: true })
    } finally {
      reply.raw.off('close', onClose)
    }
  }
  addRoute(app, 'POST', '/api/projects/:project_id/query/', handler)
  addRoute(app, 'POST', '/api/environments/:project_id/query/', handler)
}
