import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Insight } from './insight-types.ts'
import { AppError } from '../../shared/errors.ts'
import { pathId, readBody } from '../../http/drf-fields.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import { addRoute, readFormat, refuseDelete } from '../../http/route-paths.ts'
import { toInsightJson } from './insight-json.ts'
import { parseInsightBody } from './insight-schemas.ts'
import type { InsightService } from './insight-service.ts'
import { readRefresh, type InsightResults } from './insight-results.ts'


const keepValidationErrorsOut = (err: unknown): undefined => {
  if (err instanceof AppError && err.code === 'validation_error') return undefined
  throw err
}

const refreshOf = (req: FastifyRequest) => readRefresh((req.query as Record<string, unknown> | undefined)?.refresh)

/**
 * `/api/projects/:project_id/insights/`: list, create, retrieve, PATCH (soft delete); DELETE refused.
 * Reads carry the query's result as `?refresh=` asks (default `force_cache`: the cached one, if any).
 */
export async function insightRoutes(app: FastifyInstance, opts: { insights: InsightService; results: InsightResults }) {
  const base = '/api/projects/:project_id/insights/'
  const { insights, results } = opts
  const withResult = async (req: FastifyRequest, insight: Insight) => toInsightJson(insight, await results.resultOf(req.project, insight, refreshOf(req), undefined, req.user.id))

  addRoute(app, 'GET', base, async (req) => {
    readFormat(req)
    const page = readPage(req)
    const mode = refreshOf(req)
    const { count, rows } = await insights.list(req.project, page)
    const json = []
    // One insight whose stored query cannot run shows no result rather than failing the list.
    for (const row of rows) json.push(toInsightJson(row, await results.resultOf(req.project, row, mode, undefined, req.user.id).catch(keepValidationErrorsOut)))
    return paginate(req, page, count, json)
  })
  addRoute(app, 'POST', base, async (req, reply) => {
    const { input, dashboards } = parseInsightBody(readBody(req.body))
    if (input.query) results.checkQuery(input.query)
    const created = await insights.create(req.project, req.user, input, dashboards)
    return reply.code(201).send(toInsightJson(created))
  })
  addRoute(app, 'GET', `${base}:id/`, async (req) => {
    readFormat(req)
    return withResult(req, await insights.get(req.project, pathId(req)))
  })
  addRoute(app, 'PATCH', `${base}:id/`, async (req) => {
    const body = readBody(req.body)
    const id = pathId(req)
    const { input, dashboards } = parseInsightBody(body)
    if (input.query) results.checkQuery(input.query)
    const restoreOnly = Object.keys(body).filter((k) => k !== 'personal_api_key').length === 1 && input.deleted === false
    return withResult(req, await insights.update(req.project, id, input, dashboards, restoreOnly))
  })
  addRoute(app, 'DELETE', `${base}:id/`, refuseDelete)
}
