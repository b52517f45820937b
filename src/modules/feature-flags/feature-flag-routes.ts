import { pathId } from '../../http/drf-fields.ts'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { paginate, readPage } from '../../http/pagination.ts'
import { AppError } from '../../shared/errors.ts'
import type { FlagFilters } from '../../domain/flags/flag-types.ts'
import type { FeatureFlagService, FlagListQuery } from './feature-flag-service.ts'
import type { FeatureFlag } from './feature-flag-types.ts'

/** `is_simple_flag`: one condition, no properties, not aggregated by group (PostHog's definition). */
function isSimple(filters: FlagFilters): boolean {
  const groups = filters.groups ?? []
  return groups.length === 1 && (groups[0].properties ?? []).length === 0 && filters.aggregation_group_type_index == null
}

/** Adds `cohort_name` to cohort filters, as PostHog's serializer does. */
function withCohortNames(filters: FlagFilters, cohortNames: ReadonlyMap<number, string>): FlagFilters {
  if (!(filters.groups ?? []).some((g) => (g.properties ?? []).some((p) => p.type === 'cohort'))) return filters
  return {
    ...filters,
    groups: (filters.groups ?? []).map((g) => ({
      ...g,
      properties: (g.properties ?? []).map((p) => (p.type === 'cohort' ? { ...p, cohort_name: cohortNames.get(Number(p.value)) ?? null } : p)),
    })),
  }
}

/** A flag as PostHog's FeatureFlagSerializer shows it. */
export function toFlagJson(f: FeatureFlag, cohortNames: ReadonlyMap<number, string> = new Map()) {
  const simple = isSimple(f.filters)
  return {
    id: f.id,
    name: f.name,
    key: f.key,
    filters: withCohortNames(f.filters, cohortNames),
    deleted: f.deleted,
    active: f.active,
    created_by: f.createdBy,
    created_at: f.createdAt.toISOString(),
    updated_at: f.updatedAt.toISOString(),
    version: f.version,
    last_modified_by: f.lastModifiedBy,
    is_simple_flag: simple,
    rollout_percentage: simple ? (f.filters.groups![0].rollout_percentage ?? null) : null,
    ensure_experience_continuity: f.ensureExperienceContinuity,
    experiment_set: [],
    surveys: [],
    features: [],
    rollback_conditions: null,
    performed_rollback: null,
    can_edit: true,
    tags: f.tags,
    evaluation_tags: [],
    usage_dashboard: null,
    analytics_dashboards: [],
    has_enriched_analytics: false,
    user_access_level: 'editor',
    is_remote_configuration: false,
    has_encrypted_payloads: false,
    status: f.deleted ? 'DELETED' : 'ACTIVE',
    evaluation_runtime: f.evaluationRuntime,
  }
}

function listQuery(req: FastifyRequest): FlagListQuery {
  const q = req.query as Record<string, string | undefined>
  const createdById = q.created_by_id !== undefined && /^\d+$/.test(q.created_by_id) ? Number(q.created_by_id) : undefined
  return { active: q.active, search: q.search, createdById, type: q.type, evaluationRuntime: q.evaluation_runtime, order: q.order }
}

function bodyOf(req: FastifyRequest): Record<string, unknown> {
  const body = req.body
  if (body === undefined || body === null) return {}
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('invalid_input', 'Invalid data. Expected a dictionary.')
  return body as Record<string, unknown>
}

/** `/api/projects/:project_id/feature_flags/`: PostHog's flag management API (private scope). */
export async function featureFlagRoutes(app: FastifyInstance, opts: { flags: FeatureFlagService }) {
  const base = '/api/projects/:project_id/feature_flags'
  const names = (projectId: number) => opts.flags.cohortNames(projectId)
  const refuseDelete = async (_req: FastifyRequest, reply: FastifyReply) => reply.code(405).send()

  for (const path of [base, `${base}/`]) {
    app.get(path, async (req) => {
      const page = readPage(req)
      const all = await opts.flags.list(req.project, listQuery(req))
      const cohortNames = await names(req.project.id)
      return paginate(req, page, all.length, all.slice(page.offset, page.offset + page.limit).map((f) => toFlagJson(f, cohortNames)))
    })
    app.post(path, async (req, reply) => {
      const flag = await opts.flags.create(req.project, req.user, bodyOf(req))
      return reply.code(201).send(toFlagJson(flag, await names(req.project.id)))
    })
  }
  for (const path of [`${base}/:id`, `${base}/:id/`]) {
    app.get(path, async (req) => toFlagJson(await opts.flags.get(req.project, pathId(req)), await names(req.project.id)))
    app.patch(path, async (req) => {
      const flag = await opts.flags.update(req.project, req.user, pathId(req), bodyOf(req))
      return toFlagJson(flag, await names(req.project.id))
    })
    app.put(path, async (req) => {
      const flag = await opts.flags.update(req.project, req.user, pathId(req), bodyOf(req))
      return toFlagJson(flag, await names(req.project.id))
    })
    app.delete(path, refuseDelete)
  }
}
