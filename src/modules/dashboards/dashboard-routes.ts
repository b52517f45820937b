import type { FastifyInstance } from 'fastify'
import { pathId, readBody } from '../../http/drf-fields.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import { addRoute, readFormat, refuseDelete } from '../../http/route-paths.ts'
import { toDashboardJson, toDashboardListJson } from './dashboard-json.ts'
import { parseDashboardBody, parseMoveTile, parseTemplateJson } from './dashboard-schemas.ts'
import type { DashboardService, DashboardView } from './dashboard-service.ts'
import { readRefresh, type InsightResult, type InsightResults } from '../insights/insight-results.ts'
import { tileFilters } from '../insights/dashboard-filters.ts'
import type { Project } from '../projects/project-types.ts'
import { AppError } from '../../shared/errors.ts'

/** Each tile's insight result as `refresh` asks; a tile whose stored query cannot run shows no result. */
async function tileResults(results: InsightResults, project: Project, view: DashboardView, refresh: unknown, userId: number): Promise<Map<number, InsightResult>> {
  const mode = readRefresh(refresh)
  const out = new Map<number, InsightResult>()
  for (const tile of view.tiles ?? []) {
    if (!tile.insight || tile.deleted || out.has(tile.insight.id)) continue
    try {
      out.set(tile.insight.id, await results.resultOf(project, tile.insight, mode, tileFilters(view.dashboard.filters, tile.filtersOverrides), userId))
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'validation_error')) throw err
    }
  }
  return out
}


/** `/api/projects/:project_id/dashboards/` with `move_tile` and `create_from_template_json`; DELETE refused. */
export async function dashboardRoutes(app: FastifyInstance, opts: { dashboards: DashboardService; results: InsightResults }) {
  const base = '/api/projects/:project_id/dashboards/'
  const { dashboards, results } = opts

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
    const view = await dashboards.get(req.project, req.user, pathId(req))
    return toDashboardJson(view, await tileResults(results, req.project, view, (req.query as Record<string, unknown> | undefined)?.refresh, req.user.id))
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
