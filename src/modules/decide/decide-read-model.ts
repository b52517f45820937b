import type { CohortStore } from '../cohorts/cohort-store.ts'
import type { GroupTypeStore } from '../group-types/group-type-store.ts'
import type { FeatureFlagStore } from '../feature-flags/feature-flag-store.ts'
import { buildFlagState, type ProjectFlagState } from './flag-state.ts'

/** What the read model loads a project's state from: the owning features' stores, read only. */
export interface DecideSources {
  flags: Pick<FeatureFlagStore, 'listLive'>
  cohorts: Pick<CohortStore, 'listLive'>
  groupTypes: Pick<GroupTypeStore, 'list'>
}

/**
 * The decide read model: flag definitions, cohorts and group types per project, compiled, in
 * memory. /decide and local evaluation read it without a query; every change to a flag, cohort or
 * group type calls `invalidate`, and the next read rebuilds the project's state (one load at a time
 * per project; a load started before an invalidation is never kept).
 */
export function createDecideReadModel(stores: DecideSources) {
  const states = new Map<number, ProjectFlagState>()
  const loading = new Map<number, { generation: number; promise: Promise<ProjectFlagState> }>()
  const generations = new Map<number, number>()

  async function load(projectId: number, generation: number): Promise<ProjectFlagState> {
    const [flags, cohorts, groupTypes] = await Promise.all([
      stores.flags.listLive(projectId),
      stores.cohorts.listLive(projectId),
      stores.groupTypes.list(projectId),
    ])
    const state = buildFlagState(projectId, flags, cohorts, groupTypes)
    if ((generations.get(projectId) ?? 0) === generation) states.set(projectId, state)
    return state
  }

  return {
    /** The cached state, if loaded and current: the synchronous fast path. */
    peek(projectId: number): ProjectFlagState | undefined {
      return states.get(projectId)
    },
    /** The current state, loading it when needed. */
    get(projectId: number): Promise<ProjectFlagState> {
      const hit = states.get(projectId)
      if (hit) return Promise.resolve(hit)
      const generation = generations.get(projectId) ?? 0
      const inFlight = loading.get(projectId)
      if (inFlight && inFlight.generation === generation) return inFlight.promise
      const promise = load(projectId, generation).finally(() => {
        if (loading.get(projectId)?.promise === promise) loading.delete(projectId)
      })
      loading.set(projectId, { generation, promise })
      return promise
    },
    /** Drops every project's state (another process's changes may have been missed). */
    invalidateAll(): void {
      for (const projectId of new Set([...states.keys(), ...loading.keys()])) this.invalidate(projectId)
    },
    /** Drops the project's state: the next read sees every committed change. */
    invalidate(projectId: number): void {
      generations.set(projectId, (generations.get(projectId) ?? 0) + 1)
      states.delete(projectId)
      loading.delete(projectId)
    },
  }
}

export type DecideReadModel = ReturnType<typeof createDecideReadModel>
