import type { FastifyInstance } from 'fastify'
import { pathId, readBody } from '../../http/drf-fields.ts'
import { addRoute, refuseDelete } from '../../http/route-paths.ts'
import { parseCohortBody, parsePersonIds } from './cohort-schemas.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import type { CohortService } from './cohort-service.ts'
import type { Cohort } from './cohort-types.ts'
import { toUserSummary } from '../projects/project-types.ts'

/** A cohort as PostHog's CohortSerializer shows it. */
export function toCohortJson(c: Cohort) {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    groups: c.groups,
    deleted: c.deleted,
    filters: c.filters,
    query: null,
    is_calculating: false,
    created_by: c.createdBy ? toUserSummary(c.createdBy) : null,
    created_at: c.createdAt.toISOString(),
    last_calculation: c.lastCalculation?.toISOString() ?? null,
    errors_calculating: 0,
    count: c.count,
    is_static: c.isStatic,
    experiment_set: [],
  }
}

/** `/api/projects/:project_id/cohorts/` (private scope). DELETE is refused: soft delete with `deleted: true`. */
export async function cohortRoutes(app: FastifyInstance, opts: { cohorts: CohortService }) {
  const base = '/api/projects/:project_id/cohorts/'
  const { cohorts } = opts

  addRoute(app, 'GET', base, async (req) => {
    const page = readPage(req)
    const { count, rows } = await cohorts.list(req.project, page)
    return paginate(req, page, count, rows.map(toCohortJson))
  })
  addRoute(app, 'POST', base, async (req, reply) => {
    const cohort = await cohorts.create(req.project, req.user, parseCohortBody(readBody(req.body)))
    return reply.code(201).send(toCohortJson(cohort))
  })
  addRoute(app, 'GET', `${base}:id/`, async (req) => toCohortJson(await cohorts.get(req.project, pathId(req))))
  addRoute(app, 'PATCH', `${base}:id/`, async (req) => toCohortJson(await cohorts.update(req.project, pathId(req), parseCohortBody(readBody(req.body)))))
  addRoute(app, 'DELETE', `${base}:id/`, refuseDelete)
  addRoute(app, 'PATCH', `${base}:id/add_persons_to_static_cohort/`, async (req) =>
    toCohortJson(await cohorts.addPersons(req.project, pathId(req), parsePersonIds(readBody(req.body)))),
  )
}
