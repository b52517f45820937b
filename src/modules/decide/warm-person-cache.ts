import type { DecideReadModel } from './decide-read-model.ts'
import type { createPersonCache } from './person-cache.ts'

type Logger = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void }

export interface PersonCacheWarmUp {
  /** Settles when warm-up has finished or stopped; never rejects (a failure is logged). */
  done: Promise<{ entries: number; ms: number }>
  /** Stops after the chunk in flight (before the stores close). */
  stop(): Promise<void>
}

/**
 * Fills the person LRU in the background at start-up, so a restarted server answers /decide from
 * memory instead of one PGlite read per new distinct id: for every project with a flag that reads
 * person data, its most recently created persons, in chunks that yield to requests in between.
 * Entries are keyed as /decide reads them (with static cohort ids when the project's flags use them).
 */
export function startPersonCacheWarmUp(deps: {
  projectIds: () => Promise<number[]>
  flagCache: DecideReadModel
  cache: Pick<ReturnType<typeof createPersonCache>, 'warm'>
  log?: Logger
  chunk?: number
}): PersonCacheWarmUp {
  let stopped = false
  const started = Date.now()
  const run = async () => {
    let entries = 0
    for (const projectId of await deps.projectIds()) {
      if (stopped) break
      const state = await deps.flagCache.get(projectId)
      if (state.personFlags.size === 0) continue
      const withCohorts = state.compiled.usesStaticCohorts
      entries += await deps.cache.warm(projectId, { withCohorts, chunk: deps.chunk ?? 500, shouldStop: () => stopped })
    }
    return entries
  }
  const done = run().then(
    (entries) => {
      const ms = Date.now() - started
      if (entries > 0) deps.log?.info({ entries, ms }, 'person cache warmed')
      return { entries, ms }
    },
    (err: unknown) => {
      if (!stopped) deps.log?.warn({ err }, 'person cache warm-up failed; /decide reads persons on demand')
      return { entries: 0, ms: Date.now() - started }
    },
  )
  return {
    done,
    async stop() {
      stopped = true
      await done
    },
  }
}
