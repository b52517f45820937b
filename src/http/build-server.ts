import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { Level, Logger } from 'pino'
import { installErrorHandler, setPublicErrorCors, toWireError } from './error-handler.ts'
import { installPrivateAuth } from './private-scope.ts'
import { installRequestLogging } from './request-logging.ts'
import { installMetrics } from './metrics-routes.ts'
import { healthRoutes, type Readiness } from './health-routes.ts'
import type { Registry } from 'prom-client'
import { installMinReceiveRate } from './min-receive-rate.ts'
import { installConnectionCap, proxyBlockList } from './connection-cap.ts'
import type { HttpConfig } from '../config/load-config.ts'
import type { ProjectService } from '../modules/projects/project-service.ts'
import type { AuthService } from '../modules/auth/auth-service.ts'
import type { MemberService } from '../modules/auth/member-service.ts'
import { accountRoutes } from '../modules/auth/account-routes.ts'
import { userRoutes } from '../modules/auth/user-routes.ts'
import { memberRoutes } from '../modules/auth/member-routes.ts'
import type { CaptureService } from '../modules/capture/capture-service.ts'
import type { EventReadStore } from '../modules/events/event-read-store.ts'
import type { InsightService } from '../modules/insights/insight-service.ts'
import type { DashboardService } from '../modules/dashboards/dashboard-service.ts'
import type { ActionService } from '../modules/actions/action-service.ts'
import type { FeatureFlagService } from '../modules/feature-flags/feature-flag-service.ts'
import type { CohortService } from '../modules/cohorts/cohort-service.ts'
import type { GroupTypeService } from '../modules/group-types/group-type-service.ts'
import type { DecideService } from '../modules/decide/decide-service.ts'
import type { QueryService } from '../modules/query/query-service.ts'
import type { DefinitionService } from '../modules/definitions/definition-service.ts'
import { definitionRoutes } from '../modules/definitions/definition-routes.ts'
import type { InsightResults } from '../modules/insights/insight-results.ts'
import { queryRoutes } from '../modules/query/query-routes.ts'
import type { DefinitionsCache } from '../modules/decide/flag-definitions.ts'
import { projectRoutes } from '../modules/projects/project-routes.ts'
import { captureRoutes } from '../modules/capture/capture-routes.ts'
import { eventRoutes } from '../modules/events/event-routes.ts'
import { eventExportRoutes } from '../modules/events/event-export-routes.ts'
import type { EventExportService } from '../modules/events/event-export-service.ts'
import { insightRoutes } from '../modules/insights/insight-routes.ts'
import { dashboardRoutes } from '../modules/dashboards/dashboard-routes.ts'
import { actionRoutes } from '../modules/actions/action-routes.ts'
import { decideRoutes } from '../modules/decide/decide-routes.ts'
import { localEvaluationRoutes } from '../modules/decide/definitions-routes.ts'
import { featureFlagRoutes } from '../modules/feature-flags/feature-flag-routes.ts'
import { cohortRoutes } from '../modules/cohorts/cohort-routes.ts'
import { groupTypeRoutes } from '../modules/group-types/group-type-routes.ts'
import { personRoutes } from '../modules/persons/person-routes.ts'
import type { PersonService } from '../modules/persons/person-service.ts'
import { groupRoutes } from '../modules/groups/group-routes.ts'
import type { GroupService } from '../modules/groups/group-service.ts'
import type { ActionPeople } from '../modules/actions/action-people.ts'
import type { EventPersonLookup } from '../modules/events/event-routes.ts'
import { sdkAssetRoutes, type SdkAssetOptions } from '../modules/sdk-assets/sdk-asset-routes.ts'
import { surveyRoutes } from '../modules/surveys/survey-routes.ts'
import { deadLetterRoutes } from '../modules/dead-letters/dead-letter-routes.ts'
import { destinationRoutes } from '../modules/notifications/destination-routes.ts'
import type { DestinationService } from '../modules/notifications/destination-service.ts'
import { chatWebhookRoutes } from '../modules/notifications/chat-webhook-routes.ts'
import type { WebhookClient } from '../modules/notifications/webhook-client.ts'
import { webAppRoutes, type WebAppOptions } from '../modules/web-app/web-app-routes.ts'
import { apiSchemaRoutes, collectApiRoutes } from './api-schema.ts'
import type { DeadLetterStore } from '../ingestion/dead-letter-store.ts'
import type { EventQueue } from '../queue/event-queue.ts'
import type { GeoIpLookup } from '../domain/geoip/geoip-properties.ts'

/** What the routes are given: the composition root passes its services (this layer does not import app/). */
export interface ServerServices {
  projects: ProjectService
  auth: AuthService
  members: MemberService
  capture: CaptureService
  eventReads: EventReadStore
  eventExports: EventExportService
  insights: InsightService
  dashboards: DashboardService
  actions: ActionService
  actionPeople: ActionPeople
  persons: PersonService
  eventPersons: EventPersonLookup
  groups: GroupService
  featureFlags: FeatureFlagService
  cohorts: CohortService
  groupTypes: GroupTypeService
  decide: DecideService
  queries: QueryService
  insightResults: InsightResults
  definitions: DefinitionService
  flagDefinitions: DefinitionsCache
  deadLetters: DeadLetterStore
  queue: Pick<EventQueue, 'publish'>
  notifications: { destinations: DestinationService; webhookClient: WebhookClient }
  /** GeoIP of the request's address for /decide's person properties (null: off for the deployment). */
  geoip: GeoIpLookup | null
}

export interface ServerOptions {
  logger: Logger
  maxBodyBytes: number
  /** Answers `/_health` with 200 only once this returns true. */
  isReady: () => boolean
  /** What `/_ready` checks besides `isReady` (ingestion state, store pings); see health-routes.ts. */
  readiness?: Readiness
  /** posthog-js's files that `/static/` serves. */
  sdkAssets: SdkAssetOptions
  /** What `/_metrics` serves (HTTP request metrics are added to it). */
  metrics: Registry
  /** Level of successful capture and decide requests in the log (default debug). */
  publicSuccessLogLevel?: Level | 'silent'
  /** Timeouts, keep-alive and per-IP limits, trusted proxies (default: no proxy trusted, Node/Fastify timeouts). */
  limits?: Omit<HttpConfig, 'host' | 'port' | 'maxBodyBytes'>
  /** Where the built web app served at `/` lives (default `dist/web` of the package). */
  webApp?: WebAppOptions
  /** Session replay's routes (`/s/` public, session_recordings private), registered in each scope. */
  replay?: { publicRoutes(scope: FastifyInstance): Promise<void>; privateRoutes(scope: FastifyInstance): Promise<void> }
  /**
   * The process's roles (default all): `capture` registers the public scope (capture, /decide,
   * /flags, remote config, SDK assets), `api` sign-in, the private API, the query API and the web app.
   * `/_health`, `/_ready` and `/_metrics` answer in every role.
   */
  roles?: ReadonlySet<string>
}

/**
 * Builds the HTTP server: a public scope (capture, decide: project-key auth, CORS, raw bodies)
 * and a private scope (`/api/...`: session or personal API key auth, JSON bodies). Route plugins get their
 * services as arguments; nothing is hung on Fastify decorators but the request's auth.
 */
export async function buildServer(services: ServerServices, opts: ServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.logger as FastifyBaseLogger,
    bodyLimit: opts.maxBodyBytes,
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: 'x-request-id',
    // A path Fastify cannot even route (a bad %-escape) still answers in PostHog's error shape.
    frameworkErrors: (err, req, reply) => {
      const { status, body } = toWireError(err)
      setPublicErrorCors(req as unknown as FastifyRequest, reply as unknown as FastifyReply)
      void (reply as unknown as FastifyReply).code(status).send(body)
    },
    // X-Forwarded-* are believed only from these addresses (proxy-addr); nobody's by default.
    trustProxy: opts.limits?.trustedProxies.length ? [...opts.limits.trustedProxies] : false,
    ...(opts.limits && {
      requestTimeout: opts.limits.requestTimeoutMs,
      connectionTimeout: opts.limits.idleTimeoutMs,
      keepAliveTimeout: opts.limits.keepAliveTimeoutMs,
      maxRequestsPerSocket: opts.limits.maxRequestsPerSocket,
      http: {
        requestTimeout: opts.limits.requestTimeoutMs,
        headersTimeout: opts.limits.headersTimeoutMs,
        // Node checks the request/headers deadlines on this interval (its default, 30 s, would let
        // a 1 s timeout run 30 s): a tenth of the shorter one, between 100 ms and 30 s.
        connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(Math.min(opts.limits.headersTimeoutMs, opts.limits.requestTimeoutMs || Infinity) / 10))),
      },
    }),
    routerOptions: { ignoreDuplicateSlashes: true },
  }) as unknown as FastifyInstance
  if (opts.limits?.maxConnectionsPerIp) {
    installConnectionCap(app.server, { max: opts.limits.maxConnectionsPerIp, exempt: proxyBlockList(opts.limits.trustedProxies), logger: opts.logger })
  }
  if (opts.limits) {
    installMinReceiveRate(app.server, { bytesPerSecond: opts.limits.minReceiveBytesPerSecond, windowMs: opts.limits.minReceiveWindowMs }, opts.logger)
  }
  const apiRoutes = collectApiRoutes(app)
  installErrorHandler(app)
  installRequestLogging(app, { publicSuccessLevel: opts.publicSuccessLogLevel ?? 'debug' })
  installMetrics(app, opts.metrics)

  await app.register(healthRoutes, { isReady: opts.isReady, readiness: opts.readiness })

  const roles = opts.roles ?? new Set(['capture', 'api'])
  if (roles.has('capture')) await app.register(async (publicScope) => {
    // Public routes (capture, decide) register here with their own body parsing.
    await publicScope.register(captureRoutes, { capture: services.capture, maxBodyBytes: opts.maxBodyBytes, decode: opts.limits && { threads: opts.limits.captureDecodeThreads, minBytes: opts.limits.captureDecodeMinBytes } })
    const { decide, projects, flagDefinitions: definitions } = services
    await publicScope.register(decideRoutes, { decide, projects, definitions, geoip: services.geoip, maxBodyBytes: opts.maxBodyBytes })
    await publicScope.register(sdkAssetRoutes, opts.sdkAssets)
    await publicScope.register(surveyRoutes, { projects, maxBodyBytes: opts.maxBodyBytes })
    if (opts.replay) await publicScope.register(opts.replay.publicRoutes)
  })

  if (!roles.has('api')) return app

  // Sign-in, sign-out, set-up and sign-up: JSON bodies, no authentication.
  await app.register(accountRoutes, { auth: services.auth, members: services.members })

  await app.register(async (privateScope) => {
    await installPrivateAuth(privateScope, services.projects, services.auth)
    await privateScope.register(projectRoutes, { projects: services.projects, auth: services.auth })
    await privateScope.register(userRoutes, { auth: services.auth, members: services.members, projects: services.projects })
    await privateScope.register(memberRoutes, { members: services.members })
    await privateScope.register(eventExportRoutes, { exports: services.eventExports })
    await privateScope.register(eventRoutes, { events: services.eventReads, persons: services.eventPersons })
    await privateScope.register(personRoutes, { persons: services.persons })
    await privateScope.register(groupRoutes, { groups: services.groups })
    await privateScope.register(insightRoutes, { insights: services.insights, results: services.insightResults })
    await privateScope.register(queryRoutes, { queries: services.queries })
    await privateScope.register(dashboardRoutes, { dashboards: services.dashboards, results: services.insightResults })
    await privateScope.register(actionRoutes, { actions: services.actions, people: services.actionPeople })
    await privateScope.register(featureFlagRoutes, { flags: services.featureFlags })
    await privateScope.register(cohortRoutes, { cohorts: services.cohorts })
    await privateScope.register(groupTypeRoutes, { groupTypes: services.groupTypes })
    await privateScope.register(definitionRoutes, { definitions: services.definitions })
    await privateScope.register(deadLetterRoutes, { deadLetters: services.deadLetters, queue: services.queue, memberLevel: services.projects.memberLevel })
    await privateScope.register(destinationRoutes, { destinations: services.notifications.destinations })
    await privateScope.register(chatWebhookRoutes, { client: services.notifications.webhookClient })
    const { decide, projects, flagDefinitions: definitions } = services
    await privateScope.register(localEvaluationRoutes, { decide, projects, definitions })
    if (opts.replay) await privateScope.register(opts.replay.privateRoutes)
  })

  await app.register(apiSchemaRoutes, { routes: apiRoutes })
  await app.register(webAppRoutes, opts.webApp ?? {})

  return app
}
