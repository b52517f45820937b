import type { SqlClient } from '../storage/sql/sql-client.ts'
import type { EventStore } from '../ingestion/event-store.ts'
import { createSqlProjectStore } from '../storage/sql/sql-project-store.ts'
import { createProjectService, type ProjectService } from '../modules/projects/project-service.ts'
import type { EventQueue } from '../queue/event-queue.ts'
import type { EventReadStore } from '../modules/events/event-read-store.ts'
import type { ActionEventReads } from '../modules/actions/action-event-reads.ts'
import type { DeadLetterStore } from '../ingestion/dead-letter-store.ts'
import { createIngestionCounters } from '../ingestion/ingestion-counters.ts'
import { createCaptureService } from '../modules/capture/capture-service.ts'
import { createSqlInsightStore } from '../storage/sql/sql-insight-store.ts'
import { createSqlDashboardStore } from '../storage/sql/sql-dashboard-store.ts'
import { createSqlActionStore } from '../storage/sql/sql-action-store.ts'
import { createInsightService } from '../modules/insights/insight-service.ts'
import { createDashboardService } from '../modules/dashboards/dashboard-service.ts'
import { createActionService } from '../modules/actions/action-service.ts'
import { createFlagServices } from './create-flag-services.ts'
import { createSqlAuthStore } from '../storage/sql/sql-auth-store.ts'
import { createAuthService, DEFAULT_AUTH_SETTINGS } from '../modules/auth/auth-service.ts'
import { createMemberService } from '../modules/auth/member-service.ts'
import type { Config } from '../config/load-config.ts'
import type { QueryEngine } from '../modules/query/query-engine.ts'
import { createQueries } from './create-queries.ts'
import { createInsightResults } from '../modules/insights/insight-results.ts'
import { createPersonServices } from './create-person-services.ts'
import type { PersonEventStore } from '../modules/persons/person-store.ts'
import type { Logger } from 'pino'
import type { EventRetentionStore } from '../modules/retention/event-retention-store.ts'
import type { SessionCompactionStore } from '../modules/session-aggregate/session-compaction-store.ts'
import type { ChangeBus } from '../shared/change-bus.ts'
import { createSqlDefinitionStore } from '../storage/sql/sql-definition-store.ts'
import { createDefinitionService } from '../modules/definitions/definition-service.ts'
import { createMmdbGeoIpLookup } from '../storage/mmdb/mmdb-geoip-lookup.ts'
import { createNotificationServices } from './create-notification-services.ts'
import { createEventExportService } from '../modules/events/event-export-service.ts'
import type { EventExportReads } from '../modules/events/event-export-reads.ts'

export interface Stores {
  meta: SqlClient
  events: EventStore
  /** Accepted-but-unprocessed events (capture publishes, the ingestion worker consumes). */
  queue: EventQueue
  eventReads: EventReadStore
  /** Every matching event, streamed oldest first (exports). */
  eventExports: EventExportReads
  deadLetters: DeadLetterStore
  /** Action matching inside the event store. */
  actionEvents: ActionEventReads
  /** A person's events (deleted with the person on request). */
  personEvents: PersonEventStore
  /** The query API's plans, run on the event store's own query connections. */
  queryEngine: QueryEngine
  /** Deletes events past a project's retention. */
  eventRetention: EventRetentionStore
  /** Merges the sessions aggregate's partials (DuckDB; ClickHouse's stay as the view writes them). */
  sessionCompaction?: SessionCompactionStore
  /** Cache invalidations across processes (none embedded). */
  changes?: ChangeBus
}

/** Builds every service from the opened stores. Knows the SQL stores, not which driver runs them. */
export function createServices(stores: Stores, logger: Logger, config?: Pick<Config, 'flags' | 'storage' | 'auth'> & Partial<Pick<Config, 'query' | 'capture' | 'webhooks' | 'http' | 'geoip'>>) {
  // Embedded, this process makes every settings change; at scale, another node may (remote config rereads).
  const projects = announcingProjects(createProjectService(createSqlProjectStore(stores.meta), undefined, { settingsTtlMs: config?.storage.metadataUrl ? 10_000 : Infinity }), stores.changes)
  const authStore = createSqlAuthStore(stores.meta)
  const auth = createAuthService({ store: authStore, projects, settings: { ...DEFAULT_AUTH_SETTINGS, ...config?.auth }, changes: stores.changes })
  const members = createMemberService({ store: authStore, auth, projects })
  const ingestionCounters = createIngestionCounters()
  const capture = createCaptureService({ projects, queue: stores.queue, counters: ingestionCounters, limits: config?.capture })
  const insightStore = createSqlInsightStore(stores.meta)
  const insights = createInsightService(insightStore)
  const dashboards = createDashboardService(createSqlDashboardStore(stores.meta))
  const actions = createActionService(createSqlActionStore(stores.meta), stores.actionEvents)
  const flags = createFlagServices(stores.meta, logger, {
    maxEntries: config?.flags.personCacheEntries ?? 200_000,
    // Embedded, this process is the only writer and invalidates exactly; at scale, other nodes write too.
    ttlMs: config?.storage.metadataUrl ? 10_000 : Infinity,
  }, stores.changes)
  const personServices = createPersonServices({ meta: stores.meta, personEvents: stores.personEvents, queue: stores.queue, cache: flags.personData, actions, actionEvents: stores.actionEvents })
  const queries = createQueries(stores, { actions, cohorts: flags.cohorts, meta: stores.meta }, config?.query)
  const insightResults = createInsightResults(insightStore, queries)
  const definitions = createDefinitionService(createSqlDefinitionStore(stores.meta))
  const notifications = createNotificationServices(stores.meta, config)
  // One reader of the GeoIP files for ingestion and /decide; its files are read the first time a public address is met.
  const geoip = config?.geoip?.enabled === false ? null : createMmdbGeoIpLookup({ databasePath: config?.geoip?.databasePath ?? null })
  const eventExports = createEventExportService(stores.eventExports)
  return { projects, auth, members, insights, dashboards, actions, ...flags, ...personServices, queries, insightResults, definitions, notifications, geoip, capture, eventReads: stores.eventReads, eventExports, deadLetters: stores.deadLetters, queue: stores.queue, ingestionCounters }
}

export type Services = ReturnType<typeof createServices>

/**
 * The project service, telling other processes (capture processes cache project tokens, api
 * processes personal keys) when a token is reset, settings change or a user's keys are dropped, and
 * dropping what they tell it about.
 */
function announcingProjects(projects: ProjectService, changes: ChangeBus | undefined): ProjectService {
  if (!changes) return projects
  changes.subscribe((c) => {
    if (c.kind === 'project') projects.forgetProject(c.projectId)
    else if (c.kind === 'personal-keys') projects.forgetPersonalKeysOf(c.userId)
  })
  return {
    ...projects,
    async resetApiToken(project) {
      const updated = await projects.resetApiToken(project)
      changes.publish({ kind: 'project', projectId: project.id })
      return updated
    },
    async updateSettings(project, input) {
      const updated = await projects.updateSettings(project, input)
      changes.publish({ kind: 'project', projectId: project.id })
      return updated
    },
    forgetPersonalKeysOf(userId) {
      projects.forgetPersonalKeysOf(userId)
      changes.publish({ kind: 'personal-keys', userId })
    },
  }
}
