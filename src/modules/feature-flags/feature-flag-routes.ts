import type { FastifyInstance, FastifyRequest } from 'fastify'
import { pathId, readBody } from '../../http/drf-fields.ts'
import { addRoute, refuseDelete } from '../../http/route-paths.ts'
import { parseFlagBody } from './feature-flag-schemas.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import type { FlagFilters } from '../../domain/flags/flag-types.ts'
import type { FeatureFlagService } from './feature-flag-service.ts'
import type { FlagListQuery } from './feature-flag-store.ts'
import type { FeatureFlag } from './feature-flag-types.ts'
import { toUserSummary } from '../projects/project-types.ts'

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
    created_by: f.createdBy ? toUserSummary(f.createdBy) : null,
    created_at: f.createdAt.toISOString(),
    updated_at: f.updatedAt.toISOString(),
    version: f.version,
    last_modified_by: f.lastModifiedBy ? toUserSummary(f.lastModifiedBy) : null,
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

const FLAG_TYPES = ['boolean', 'multivariant', 'experiment', 'remote_config'] as const

/** The list filters from the query string; values PostHog ignores (an unknown type, a bad id) are ignored here too. */
function listQuery(req: FastifyRequest): FlagListQuery {
  const q = req.query as Record<string, unknown>
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined)
  const createdById = text(q.created_by_id)
  return {
    active: q.active === 'true' ? true : q.active === 'false' ? false : undefined,
    search: text(q.search),
    createdById: createdById && /^\d{1,9}$/.test(createdById) ? Number(createdById) : undefined,
    type: FLAG_TYPES.find((t) => t === q.type),
    evaluationRuntime: text(q.evaluation_runtime),
    order: text(q.order),
  }
}

/** `/api/projects/:project_id/feature_flags/`: PostHog's flag management API (private scope). */
export async function featureFlagRoutes(app: FastifyInstance, opts: { flags: FeatureFlagService }) {
  const base = '/api/projects/:project_id/feature_flags/'
  const { flags } = opts
  const names = (projectId: number) => flags.cohortNames(projectId)

  addRoute(app, 'GET', base, async (req) => {
    const page = readPage(req)
    const { count, rows } = await flags.list(req.project, listQuery(req), page)
    const cohortNames = await names(req.project.id)
    return paginate(req, page, count, rows.map((f) => toFlagJson(f, cohortNames)))
  })
  addRoute(app, 'POST', base, async (req, reply) => {
    const flag = await flags.create(req.project, req.user, parseFlagBody(readBody(req.body), { create: true }))
    return reply.code(201).send(toFlagJson(flag, await names(req.project.id)))
  })
  addRoute(app, 'GET', `${base}:id/`, async (req) => toFlagJson(await flags.get(req.project, pathId(req)), await names(req.project.id)))
  for (const method of ['PATCH', 'PUT'] as const) {
    addRoute(app, method, `${base}:id/`, async (req) => {
      const flag = await flags.update(req.project, req.user, pathId(req), parseFlagBody(readBody(req.body), { create: false }))
      return toFlagJson(flag, await names(req.project.id))
    })
  }
  addRoute(app, 'DELETE', `${base}:id/`, refuseDelete)
}
