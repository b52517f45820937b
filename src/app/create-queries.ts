import type { Config } from '../config/load-config.ts'
import type { ActionService } from '../modules/actions/action-service.ts'
import type { CohortService } from '../modules/cohorts/cohort-service.ts'
import { cohortProperties } from '../domain/query/legacy-cohort-groups.ts'
import { QUERY_KINDS } from '../modules/query/query-kinds.ts'
import { createQueryService, type QueryLookups } from '../modules/query/query-service.ts'
import { AppError, validationError } from '../shared/errors.ts'
import type { SqlClient } from '../storage/sql/sql-client.ts'
import { staticCohortPersonUuids } from '../storage/sql/sql-cohort-members.ts'
import { groupPropertyValues } from '../storage/sql/sql-group-properties.ts'
import { createSqlPersonStore } from '../storage/sql/sql-person-store.ts'
import { createSqlGroupStore } from '../storage/sql/sql-group-store.ts'
import type { Stores } from './create-services.ts'

/** Members of a static cohort a query may filter by (bound as a list in the statement). */
const MAX_STATIC_MEMBERS = 50_000

const isNotFound = (err: unknown) => err instanceof AppError && err.code === 'not_found'

/** The query service: the event store's query engine plus metadata look-ups (actions, cohorts). */
export function createQueries(
  stores: Pick<Stores, 'queryEngine'>,
  deps: { actions: ActionService; cohorts: CohortService; meta: SqlClient },
  limits: Config['query'] = { concurrency: 4, perProject: 3, perUser: 2, ratePerUser: 240, timeoutMs: 30_000, maxRows: 500_000, threads: 1, nice: 0 },
) {
  const persons = createSqlPersonStore(deps.meta)
  const groups = createSqlGroupStore(deps.meta)
  const lookups: QueryLookups = {
    async action(project, id) {
      try {
        const action = await deps.actions.get(project, id)
        return action.deleted ? null : { name: action.name ?? `Action ${id}`, steps: action.steps }
      } catch (err) {
        if (isNotFound(err)) return null
        throw err
      }
    },
    async cohort(project, id) {
      try {
        const c = await deps.cohorts.get(project, id)
        if (c.deleted) return null
        const personIds = c.isStatic ? await staticCohortPersonUuids(deps.meta, c.id, MAX_STATIC_MEMBERS + 1) : []
        if (personIds.length > MAX_STATIC_MEMBERS) {
          throw validationError('query.properties', `Static cohort ${id} has more than ${MAX_STATIC_MEMBERS} members: too many to filter a query by yet.`, 'invalid_input')
        }
        return { id: c.id, name: c.name, properties: c.isStatic ? null : cohortProperties(c.filters, c.groups), isStatic: c.isStatic, personIds }
      } catch (err) {
        if (isNotFound(err)) return null
        throw err
      }
    },
    async groupValues(project, typeIndex, key, limit) {
      return groupPropertyValues(deps.meta, project.id, typeIndex, key, limit + 1)
    },
    persons: (project, uuids) => persons.findByUuids(project.id, uuids),
    async groups(project, typeIndex, keys) {
      return (await groups.findByKeys(project.id, typeIndex, keys)).map((g) => ({ typeIndex, key: g.key, properties: g.properties, createdAt: g.createdAt }))
    },
  }
  return createQueryService({ engine: stores.queryEngine, lookups, limits, kinds: QUERY_KINDS })
}
