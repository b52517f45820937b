import type { CohortStore } from '../cohorts/cohort-store.ts'
import type { GroupTypeStore } from '../group-types/group-type-store.ts'
import type { FeatureFlagStore } from './feature-flag-store.ts'
import { buildFlagState, type ProjectFlagState } from './flag-state.ts'

/**
 * In-memory flag definitions, cohorts and group types per project. /decide reads it without a
 * query; any change calls `invalidate`, and the next read rebuilds the project's state (one load
 * at a time per project; a load started before an invalidation is never kept).
 */
export function createFlagCache(stores: { flags: FeatureFlagStore; cohorts: CohortStore; groupTypes: GroupTypeStore }) {
  const states = new Map<number, ProjectFlagState>()
  const loading = new Map<number, { generation: number; promise: Promise<ProjectFlagState> }>()
  const generations = new Map<number, number>()
  const listeners: Array<(projectId: number) => void> = []

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
    /** Drops the project's state: the next read sees every committed change. */
    invalidate(projectId: number): void {
      generations.set(projectId, (generations.get(projectId) ?? 0) + 1)
      states.delete(projectId)
      loading.delete(projectId)
      for (const listener of listeners) listener(projectId)
    },
    /** Called after every invalidation (derived caches such as definition payloads). */
    onInvalidate(listener: (projectId: number) => void): void {
      listeners.push(listener)
    },
  }
}

export type FlagCache = ReturnType<typeof createFlagCache>
