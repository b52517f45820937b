import type { FlagFilters } from '../../domain/flags/flag-types.ts'
import { AppError, validationError } from '../../shared/errors.ts'
import type { Project, User } from '../projects/project-types.ts'
import type { Cohort } from '../cohorts/cohort-types.ts'
import type { FeatureFlagStore, FlagListQuery } from './feature-flag-store.ts'
import type { Page } from '../../shared/page.ts'
import type { FeatureFlag, FeatureFlagWrite } from './feature-flag-types.ts'
import { validateFilters, type FilterContext } from './feature-flag-validation.ts'
import type { FlagBody } from './feature-flag-schemas.ts'
import { dependencyGraph } from '../../domain/flags/flag-dependencies.ts'


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

  /** The flag to write: the body's fields over the existing flag's, filters validated in the project's context. */
  async function toWrite(projectId: number, body: FlagBody, existing: FeatureFlag | null): Promise<FeatureFlagWrite> {
    let rawFilters: unknown = body.filters ?? existing?.filters ?? {}
    if (existing && body.filters && !('groups' in body.filters)) {
      rawFilters = { ...existing.filters, ...body.filters } // PostHog keeps the stored conditions on a PATCH without `groups`
    }
    if (!existing && body.rolloutPercentage !== undefined && !('groups' in (rawFilters as object))) {
      rawFilters = { ...(rawFilters as object), groups: [{ properties: [], rollout_percentage: body.rolloutPercentage ?? null }] }
    }
    if (Object.keys(rawFilters as object).length === 0) rawFilters = DEFAULT_FILTERS
    return {
      key: body.key ?? existing!.key,
      name: body.name ?? existing?.name ?? '',
      filters: validateFilters(rawFilters, await filterContext(projectId, existing?.id ?? null)),
      active: body.active ?? existing?.active ?? true,
      deleted: body.deleted ?? existing?.deleted ?? false,
      ensureExperienceContinuity: body.ensureExperienceContinuity ?? existing?.ensureExperienceContinuity ?? false,
      tags: body.tags ?? existing?.tags ?? [],
      evaluationRuntime: body.evaluationRuntime ?? existing?.evaluationRuntime ?? 'all',
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

    list(project: Project, q: FlagListQuery, page: Page): Promise<{ count: number; rows: FeatureFlag[] }> {
      return store.list(project.id, q, page)
    },
    async get(project: Project, id: number): Promise<FeatureFlag> {
      const flag = Number.isSafeInteger(id) ? await store.get(project.id, id) : null
      if (!flag) throw new AppError('not_found', 'Not found.')
      return flag
    },
    async create(project: Project, user: User, body: FlagBody): Promise<FeatureFlag> {
      const flag = await toWrite(project.id, body, null)
      await checkKeyFree(project.id, flag.key)
      return saved(project.id, () => store.insert({ projectId: project.id, userId: user.id, flag }))
    },
    async update(project: Project, user: User, id: number, body: FlagBody): Promise<FeatureFlag> {
      const existing = await this.get(project, id)
      const flag = await toWrite(project.id, body, existing)
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

export type FeatureFlagService = ReturnType<typeof createFeatureFlagService>
