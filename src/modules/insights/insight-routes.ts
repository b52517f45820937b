import type { FastifyInstance } from 'fastify'
import { pathId, readBody } from '../../http/drf-fields.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import { addRoute, readFormat, refuseDelete } from '../../http/route-paths.ts'
import { toInsightJson } from './insight-json.ts'
import { parseInsightBody } from './insight-schemas.ts'
import type { InsightService } from './insight-service.ts'


/** `/api/projects/:project_id/insights/`: list, create, retrieve, PATCH (soft delete); DELETE refused. */
export async function insightRoutes(app: FastifyInstance, opts: { insights: InsightService }) {
  const base = '/api/projects/:project_id/insights/'
  const { insights } = opts

  addRoute(app, 'GET', base, async (req) => {
    readFormat(req)
    const page = readPage(req)
    const { count, rows } = await insights.list(req.project, page)
    return paginate(req, page, count, rows.map(toInsightJson))
  })
  addRoute(app, 'POST', base, async (req, reply) => {
    const { input, dashboards } = parseInsightBody(readBody(req.body))
    const created = await insights.create(req.project, req.user, input, dashboards)
    return reply.code(201).send(toInsightJson(created))
  })
  addRoute(app, 'GET', `${base}:id/`, async (req) => {
    readFormat(req)
    return toInsightJson(await insights.get(req.project, pathId(req)))
  })
  addRoute(app, 'PATCH', `${base}:id/`, async (req) => {
    const body = readBody(req.body)
    const id = pathId(req)
    const { input, dashboards } = parseInsightBody(body)
    const restoreOnly = Object.keys(body).filter((k) => k !== 'personal_api_key').length === 1 && input.deleted === false
    return toInsightJson(await insights.update(req.project, id, input, dashboards, restoreOnly))
  })
  addRoute(app, 'DELETE', `${base}:id/`, refuseDelete)
}
