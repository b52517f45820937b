import { pathId } from '../../http/drf-fields.ts'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { paginate, readPage } from '../../http/pagination.ts'
import { AppError } from '../../shared/errors.ts'
import type { CohortService } from './cohort-service.ts'
import type { Cohort } from './cohort-types.ts'

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
    created_by: c.createdBy,
    created_at: c.createdAt.toISOString(),
    last_calculation: c.lastCalculation?.toISOString() ?? null,
    errors_calculating: 0,
    count: c.count,
    is_static: c.isStatic,
    experiment_set: [],
  }
}

function bodyOf(req: FastifyRequest): Record<string, unknown> {
  const body = req.body
  if (body === undefined || body === null) return {}
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('invalid_input', 'Invalid data. Expected a dictionary.')
  return body as Record<string, unknown>
}


/** `/api/projects/:project_id/cohorts/` (private scope). DELETE is refused: soft delete with `deleted: true`. */
export async function cohortRoutes(app: FastifyInstance, opts: { cohorts: CohortService }) {
  const base = '/api/projects/:project_id/cohorts'
  for (const path of [base, `${base}/`]) {
    app.get(path, async (req) => {
      const page = readPage(req)
      const all = await opts.cohorts.list(req.project)
      return paginate(req, page, all.length, all.slice(page.offset, page.offset + page.limit).map(toCohortJson))
    })
    app.post(path, async (req, reply) => reply.code(201).send(toCohortJson(await opts.cohorts.create(req.project, req.user, bodyOf(req)))))
  }
  for (const path of [`${base}/:id`, `${base}/:id/`]) {
    app.get(path, async (req) => toCohortJson(await opts.cohorts.get(req.project, pathId(req))))
    app.patch(path, async (req) => toCohortJson(await opts.cohorts.update(req.project, pathId(req), bodyOf(req))))
    app.delete(path, async (_req, reply) => reply.code(405).send())
  }
  for (const path of [`${base}/:id/add_persons_to_static_cohort`, `${base}/:id/add_persons_to_static_cohort/`]) {
    app.patch(path, async (req) => toCohortJson(await opts.cohorts.addPersons(req.project, pathId(req), bodyOf(req).person_ids)))
  }
}
