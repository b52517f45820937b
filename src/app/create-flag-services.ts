import type { Logger } from 'pino'
import type { SqlClient } from '../storage/sql/sql-client.ts'
import { createSqlFeatureFlagStore } from '../storage/sql/sql-feature-flag-store.ts'
import { createSqlCohortStore } from '../storage/sql/sql-cohort-store.ts'
import { createSqlGroupTypeStore } from '../storage/sql/sql-group-type-store.ts'
import { createSqlPersonDataStore } from '../storage/sql/sql-person-data-store.ts'
import { createDecideReadModel } from '../modules/decide/decide-read-model.ts'
import { createFeatureFlagService } from '../modules/feature-flags/feature-flag-service.ts'
import { createCohortService } from '../modules/cohorts/cohort-service.ts'
import { createGroupTypeService } from '../modules/group-types/group-type-service.ts'
import { createDecideService } from '../modules/decide/decide-service.ts'
import { createDefinitionsCache } from '../modules/decide/flag-definitions.ts'
import { createPersonCache, type PersonCacheOptions } from '../modules/decide/person-cache.ts'
import { localChangeBus, type ChangeBus } from '../shared/change-bus.ts'

/**
 * The feature-flag side of Tally: flag, cohort and group-type management, the per-project flag
 * cache they invalidate, and /decide evaluation over stored person data.
 */
export function createFlagServices(meta: SqlClient, logger: Logger, personCacheOptions: PersonCacheOptions, changes: ChangeBus = localChangeBus()) {
  const flagStore = createSqlFeatureFlagStore(meta)
  const cohortStore = createSqlCohortStore(meta)
  const groupTypeStore = createSqlGroupTypeStore(meta)
  const cache = createPersonCache(createSqlPersonDataStore(meta), personCacheOptions)
  const flagCache = createDecideReadModel({ flags: flagStore, cohorts: cohortStore, groupTypes: groupTypeStore })
  // Each change is applied here and told to the other processes (capture processes serve /decide
  // from their own caches); what they tell is applied the same way.
  const dropFlags = (projectId: number) => {
    flagCache.invalidate(projectId)
    cache.invalidateProject(projectId) // static cohort membership is cached with the person
  }
  const invalidate = (projectId: number) => {
    dropFlags(projectId)
    changes.publish({ kind: 'flags', projectId })
  }
  const personData: typeof cache = {
    ...cache,
    invalidatePersons(projectId, distinctIds) {
      cache.invalidatePersons(projectId, distinctIds)
      changes.publish({ kind: 'persons', projectId, distinctIds: [...distinctIds] })
    },
    invalidateProject(projectId) {
      cache.invalidateProject(projectId)
      changes.publish({ kind: 'persons', projectId, distinctIds: null })
    },
  }
  changes.subscribe((c) => {
    if (c.kind === 'flags') dropFlags(c.projectId)
    else if (c.kind === 'persons') {
      if (c.distinctIds) cache.invalidatePersons(c.projectId, c.distinctIds)
      else cache.invalidateProject(c.projectId)
    } else if (c.kind === 'lost') flagCache.invalidateAll() // persons expire by their TTL at scale
  })
  return {
    flagCache,
    personData,
    featureFlags: createFeatureFlagService(flagStore, {
      reads: {
        liveFlags: async (projectId) => (await flagCache.get(projectId)).flags,
        liveCohorts: async (projectId) => (await flagCache.get(projectId)).cohorts,
      },
      onChange: (projectId) => {
        flagCache.invalidate(projectId)
        changes.publish({ kind: 'flags', projectId })
      },
    }),
    cohorts: createCohortService(cohortStore, personData, invalidate),
    groupTypes: createGroupTypeService(groupTypeStore, invalidate),
    decide: createDecideService({ cache: flagCache, persons: personData, log: logger.child({ module: 'decide' }) }),
    flagDefinitions: createDefinitionsCache(),
  }
}

export type FlagServices = ReturnType<typeof createFlagServices>
