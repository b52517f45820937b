import type { FastifyInstance } from 'fastify'
import { pathId, readBody } from '../../http/drf-fields.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import { addRoute, readFormat, refuseDelete } from '../../http/route-paths.ts'
import { toDashboardJson, toDashboardListJson } from './dashboard-json.ts'
import { parseDashboardBody, parseMoveTile, parseTemplateJson } from './dashboard-schemas.ts'
import type { DashboardService } from './dashboard-service.ts'


/** `/api/projects/:project_id/dashboards/` with `move_tile` and `create_from_template_json`; DELETE refused. */
export async function dashboardRoutes(app: FastifyInstance, opts: { dashboards: DashboardService }) {
  const base = '/api/projects/:project_id/dashboards/'
  const { dashboards } = opts

  addRoute(app, 'GET', base, async (req) => {
    readFormat(req)
    const page = readPage(req)
    const { count, rows } = await dashboards.list(req.project, req.user, page)
    return paginate(req, page, count, rows.map(toDashboardListJson))
  })
  addRoute(app, 'POST', base, async (req, reply) => {
    const created = await dashboards.create(req.project, req.user, parseDashboardBody(readBody(req.body)))
    return reply.code(201).send(toDashboardJson(created))
  })
  // Registered before `:id/` routes only for readability: find-my-way prefers static segments anyway.
  addRoute(app, 'POST', `${base}create_from_template_json/`, async (req) => {
    const template = parseTemplateJson(readBody(req.body))
    return toDashboardJson(await dashboards.createFromTemplate(req.project, req.user, template))
  })
  addRoute(app, 'GET', `${base}:id/`, async (req) => {
    readFormat(req)
    return toDashboardJson(await dashboards.get(req.project, req.user, pathId(req)))
  })
  addRoute(app, 'PATCH', `${base}:id/`, async (req) => {
    const id = pathId(req)
    const body = readBody(req.body)
    const parsed = parseDashboardBody(body)
    const restoreOnly = Object.keys(body).filter((k) => k !== 'personal_api_key').length === 1 && parsed.input.deleted === false
    return toDashboardJson(await dashboards.update(req.project, req.user, id, parsed, restoreOnly))
  })
  addRoute(app, 'PATCH', `${base}:id/move_tile/`, async (req) => {
    const id = pathId(req)
    return toDashboardJson(await dashboards.moveTile(req.project, req.user, id, parseMoveTile(readBody(req.body))))
  })
  addRoute(app, 'DELETE', `${base}:id/`, refuseDelete)
}
