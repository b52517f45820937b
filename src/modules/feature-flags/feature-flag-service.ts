import type { FlagFilters } from '../../domain/flags/flag-types.ts'
import { AppError, validationError } from '../../shared/errors.ts'
import type { Project, User } from '../projects/project-types.ts'
import type { Cohort } from '../cohorts/cohort-types.ts'
import type { FeatureFlagStore } from './feature-flag-store.ts'
import type { FeatureFlag, FeatureFlagWrite } from './feature-flag-types.ts'
import { validateFilters, validateKey, type FilterContext } from './feature-flag-validation.ts'
import { dependencyGraph } from '../../domain/flags/flag-dependencies.ts'

export interface FlagListQuery {
  active?: string
  search?: string
  createdById?: number
  type?: string
  evaluationRuntime?: string
  order?: string
}

const RUNTIMES = ['server', 'client', 'all']
/**
 * What validation reads of the project's other flags and cohorts (dependencies, cohort conditions).
 * The composition root answers from the decide read model, so no query per write.
 */
export interface FlagValidationReads {
  liveFlags(projectId: number): Promise<FeatureFlag[]>
  liveCohorts(projectId: number): Promise<Cohort[]>
}

export interface FeatureFlagServiceDeps {
  reads: FlagValidationReads
  /** Called after every write (the decide read model drops the project's state). */
  onChange(projectId: number): void
}

const DEFAULT_FILTERS: FlagFilters = { groups: [{ properties: [], rollout_percentage: null }] }

/**
 * Feature flag management as PostHog's FeatureFlagViewSet: create, list, retrieve, update and soft
 * delete, with PostHog's validation. Every change invalidates the project's flag cache, so the next
 * /decide sees it.
 */
export function createFeatureFlagService(store: FeatureFlagStore, deps: FeatureFlagServiceDeps) {
  async function filterContext(projectId: number, selfId: number | null): Promise<FilterContext> {
    const [flags, cohorts] = await Promise.all([deps.reads.liveFlags(projectId), deps.reads.liveCohorts(projectId)])
    return {
      cohorts: new Map(cohorts.map((c) => [c.id, c])),
      flags: new Map(flags.map((f) => [f.id, { key: f.key, filters: f.filters }])),
      selfId,
    }
  }

  async function checkKeyFree(projectId: number, key: string, exceptId?: number) {
    if (await store.keyExists(projectId, key, exceptId)) {
      throw validationError('key', 'There is already a feature flag with this key.', 'unique')
    }
  }

  async function readWrite(projectId: number, body: Record<string, unknown>, existing: FeatureFlag | null): Promise<FeatureFlagWrite> {
    const has = (k: string) => Object.prototype.hasOwnProperty.call(body, k)
    const key = existing && !has('key') ? existing.key : validateKey(body.key)
    let rawFilters: unknown = has('filters') ? body.filters : (existing?.filters ?? {})
    if (existing && has('filters') && rawFilters && typeof rawFilters === 'object' && !('groups' in rawFilters)) {
      rawFilters = { ...existing.filters, ...rawFilters } // PostHog keeps the stored conditions on a PATCH without `groups`
    }
    if (!existing && has('rollout_percentage') && rawFilters && typeof rawFilters === 'object' && !('groups' in rawFilters)) {
      rawFilters = { ...rawFilters, groups: [{ properties: [], rollout_percentage: body.rollout_percentage ?? null }] }
    }
    if (rawFilters && typeof rawFilters === 'object' && Object.keys(rawFilters).length === 0) rawFilters = DEFAULT_FILTERS
    const filters = validateFilters(rawFilters, await filterContext(projectId, existing?.id ?? null))
    const bool = (k: string, fallback: boolean) => {
      if (!has(k)) return fallback
      if (typeof body[k] !== 'boolean') throw validationError(k, 'Must be a valid boolean.', 'invalid')
      return body[k] as boolean
    }
    const name = has('name') ? body.name : (existing?.name ?? '')
    if (typeof name !== 'string') throw validationError('name', 'Not a valid string.', 'invalid')
    const tags = has('tags') ? body.tags : (existing?.tags ?? [])
    if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string')) throw validationError('tags', 'Expected a list of items.', 'not_a_list')
    const runtime = has('evaluation_runtime') ? body.evaluation_runtime : (existing?.evaluationRuntime ?? 'all')
    if (typeof runtime !== 'string' || !RUNTIMES.includes(runtime)) {
      throw validationError('evaluation_runtime', `"${String(runtime)}" is not a valid choice.`, 'invalid_choice')
    }
    return {
      key,
      name,
      filters,
      active: bool('active', existing?.active ?? true),
      deleted: bool('deleted', existing?.deleted ?? false),
      ensureExperienceContinuity: bool('ensure_experience_continuity', existing?.ensureExperienceContinuity ?? false),
      tags: [...new Set(tags as string[])],
      evaluationRuntime: runtime,
    }
  }

  async function refuseDeletingDependency(project: Project, flag: FeatureFlag) {
    const flags = await deps.reads.liveFlags(project.id)
    const graph = dependencyGraph(flags)
    const self = flags.findIndex((f) => f.id === flag.id)
    const dependents = self < 0 ? [] : flags.filter((f, i) => f.active && i !== self && graph[i]!.includes(self))
    if (dependents.length > 0) {
      const keys = dependents.map((f) => f.key).join(', ')
      throw validationError(null, `Cannot delete this feature flag because other active flags depend on it: ${keys}`, 'invalid_input')
    }
  }

  async function saved<T>(projectId: number, write: () => Promise<T>): Promise<T> {
    try {
      return await write()
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw validationError('key', 'There is already a feature flag with this key.', 'unique')
      throw err
    } finally {
      deps.onChange(projectId)
    }
  }

  return {
    /** Cohort id -> name, to show cohort conditions as PostHog does. */
    async cohortNames(projectId: number): Promise<Map<number, string>> {
      return new Map((await deps.reads.liveCohorts(projectId)).map((c) => [c.id, c.name]))
    },

    async list(project: Project, q: FlagListQuery): Promise<FeatureFlag[]> {
      let flags = await store.listLive(project.id)
      if (q.active === 'true' || q.active === 'false') flags = flags.filter((f) => f.active === (q.active === 'true'))
      if (q.createdById !== undefined) flags = flags.filter((f) => f.createdBy?.id === q.createdById)
      if (q.search) {
        const s = q.search.toLowerCase()
        flags = flags.filter((f) => f.key.toLowerCase().includes(s) || f.name.toLowerCase().includes(s))
      }
      if (q.evaluationRuntime) flags = flags.filter((f) => f.evaluationRuntime === q.evaluationRuntime)
      if (q.type === 'boolean') flags = flags.filter((f) => !(f.filters.multivariate?.variants?.length ?? 0))
      if (q.type === 'multivariant') flags = flags.filter((f) => (f.filters.multivariate?.variants?.length ?? 0) > 0)
      if (q.type === 'experiment' || q.type === 'remote_config') flags = []
      if (q.order) flags = sortFlags(flags, q.order)
      return flags
    },
    async get(project: Project, id: number): Promise<FeatureFlag> {
      const flag = Number.isSafeInteger(id) ? await store.get(project.id, id) : null
      if (!flag) throw new AppError('not_found', 'Not found.')
      return flag
    },
    async create(project: Project, user: User, body: Record<string, unknown>): Promise<FeatureFlag> {
      const flag = await readWrite(project.id, body, null)
      await checkKeyFree(project.id, flag.key)
      return saved(project.id, () => store.insert({ projectId: project.id, userId: user.id, flag }))
    },
    async update(project: Project, user: User, id: number, body: Record<string, unknown>): Promise<FeatureFlag> {
      const existing = await this.get(project, id)
      const flag = await readWrite(project.id, body, existing)
      if (flag.key !== existing.key) {
        await checkKeyFree(project.id, flag.key, id)
        renameEnrollment(flag.filters, existing.key, flag.key)
      }
      if (flag.deleted && !existing.deleted) await refuseDeletingDependency(project, existing)
      return saved(project.id, () => store.update({ projectId: project.id, id, userId: user.id, flag }))
    },
  }
}

/** PostHog rewrites `$feature_enrollment/<old key>` in super groups when a flag is renamed. */
function renameEnrollment(filters: FlagFilters, from: string, to: string) {
  for (const group of filters.super_groups ?? []) {
    for (const p of group.properties ?? []) {
      if (p.key === `$feature_enrollment/${from}`) (p as { key: string }).key = `$feature_enrollment/${to}`
    }
  }
}

function sortFlags(flags: FeatureFlag[], order: string): FeatureFlag[] {
  const desc = order.startsWith('-')
  const field = desc ? order.slice(1) : order
  const value = (f: FeatureFlag): string | number =>
    field === 'key' ? f.key : field === 'name' ? f.name : field === 'updated_at' ? f.updatedAt.getTime() : f.createdAt.getTime()
  return [...flags].sort((a, b) => (value(a) < value(b) ? -1 : value(a) > value(b) ? 1 : 0) * (desc ? -1 : 1))
}

export type FeatureFlagService = ReturnType<typeof createFeatureFlagService>
