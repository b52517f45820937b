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

/**
 * The feature-flag side of Tally: flag, cohort and group-type management, the per-project flag
 * cache they invalidate, and /decide evaluation over stored person data.
 */
export function createFlagServices(meta: SqlClient, logger: Logger, personCacheOptions: PersonCacheOptions) {
  const flagStore = createSqlFeatureFlagStore(meta)
  const cohortStore = createSqlCohortStore(meta)
  const groupTypeStore = createSqlGroupTypeStore(meta)
  const personData = createPersonCache(createSqlPersonDataStore(meta), personCacheOptions)
  const flagCache = createDecideReadModel({ flags: flagStore, cohorts: cohortStore, groupTypes: groupTypeStore })
  const invalidate = (projectId: number) => {
    flagCache.invalidate(projectId)
    personData.invalidateProject(projectId) // static cohort membership is cached with the person
  }
  return {
    flagCache,
    personData,
    featureFlags: createFeatureFlagService(flagStore, {
      reads: {
        liveFlags: async (projectId) => (await flagCache.get(projectId)).flags,
        liveCohorts: async (projectId) => (await flagCache.get(projectId)).cohorts,
      },
      onChange: (projectId) => flagCache.invalidate(projectId),
    }),
    cohorts: createCohortService(cohortStore, personData, invalidate),
    groupTypes: createGroupTypeService(groupTypeStore, invalidate),
    decide: createDecideService({ cache: flagCache, persons: personData, log: logger.child({ module: 'decide' }) }),
    flagDefinitions: createDefinitionsCache(),
  }
}

export type FlagServices = ReturnType<typeof createFlagServices>
