import type { FastifyInstance } from 'fastify'
import type { Level, Logger } from 'pino'
import type { Config } from '../config/load-config.ts'
import { buildServer } from '../http/build-server.ts'
import type { BootstrapResult } from '../modules/projects/project-service.ts'
import { createAdapters } from './create-adapters.ts'
import { createReplay, type Replay } from './create-replay.ts'
import { createServices, type Services } from './create-services.ts'
import { createMetrics } from './create-metrics.ts'
import { createIngestionPipeline } from './create-ingestion-pipeline.ts'
import { createGeoIpStep } from '../ingestion/steps/geoip-step.ts'
import { createPersonsStep } from '../ingestion/steps/persons-step.ts'
import { createDefinitionsStep } from '../ingestion/steps/definitions-step.ts'
import { createNotifyStep } from '../ingestion/steps/notify-step.ts'
import { startOutboxSender } from '../modules/notifications/outbox-sender.ts'
import { startRetentionJob } from '../modules/retention/retention-job.ts'
import { startSessionCompactionJob } from '../modules/session-aggregate/session-compaction-job.ts'
import { createSqlDefinitionStore } from '../storage/sql/sql-definition-store.ts'
import { createSqlIngestionGroupStore, createSqlIngestionPersonStore } from '../storage/sql/sql-ingestion-person-store.ts'
import { startPersonCacheWarmUp, type PersonCacheWarmUp } from '../modules/decide/warm-person-cache.ts'
import { createIngestionHealth, withQueueState, type IngestionHealth } from '../ingestion/ingestion-health.ts'
import type { EventStore } from '../ingestion/event-store.ts'
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { SdkAssetOptions } from '../modules/sdk-assets/sdk-asset-routes.ts'

export interface TallyApp {
  http: FastifyInstance
  services: Services
  /** What the first start created (keys included, once), or `{created: false}`. */
  bootstrap: BootstrapResult
  /** The background fill of /decide's person cache (settles at once when disabled). */
  personCacheWarmUp: PersonCacheWarmUp['done']
  /** Session replay: its services, retention run and queue drain (tests, CLI). */
  replay: Replay
  /** Whether ingestion is blocked and why (what `/_ready` serves; a plain object). */
  ingestionHealth(): IngestionHealth
  /** Stops HTTP first, then background work, then closes the stores. */
  close(): Promise<void>
}

/** The composition root: opens stores, builds services and the HTTP server. Does not listen. */
export async function createApp(
  config: Config,
  logger: Logger,
  opts: {
    /** Test-only: wraps the event store port the ingestion worker writes to (outage tests). */
    wrapEventStore?: (store: EventStore) => EventStore
  } = {},
): Promise<TallyApp> {
  let ready = false
  const { roles } = config
  // A capture-only process opens no event store: the metadata store and the queue are all it uses.
  const stores = await createAdapters(config, { logger, events: roles.has('api') || roles.has('worker'), queue: true })
  let replay: Replay | null = null
  try {
    const services = createServices(stores, logger, config)
    const bootstrap = await services.projects.bootstrap(config.bootstrap)
    await services.projects.warmUp()
    // The ingestion worker: queue -> pipeline -> event store, in micro-batches.
    const health = createIngestionHealth({ logger: logger.child({ module: 'ingestion' }) })
    const ingestionHealth = () => withQueueState(health.state(), stores.queue.writeState())
    // Background work of the worker role: events past a project's retention deleted in bounded steps,
    // and the outbox sent (messages are planned after the store, sent beside ingestion, never inside it).
    const worker = roles.has('worker')
    const retention = worker && startRetentionJob({
      projects: () => services.projects.listProjects(),
      store: stores.eventRetention,
      logger: logger.child({ module: 'retention' }),
      checkMs: config.retention.checkMs,
    })
    const compaction = worker && stores.sessionCompaction && config.sessions.compactCheckMs > 0 && startSessionCompactionJob({
      store: stores.sessionCompaction,
      logger: logger.child({ module: 'sessions' }),
      checkMs: config.sessions.compactCheckMs,
    })
    const metrics = createMetrics(services, stores.queue, ingestionHealth, () => stores.memory(), {
      retention: retention ? retention.stats : undefined,
      sessionCompaction: compaction ? compaction.stats : undefined,
    })
    const { notifications } = services
    const outboxSender = worker && startOutboxSender({
      store: notifications.outbox,
      client: notifications.webhookClient,
      options: { ...notifications.webhooks, concurrencyPerChannel: notifications.webhooks.concurrency, pollMs: 1000, leaseMs: notifications.webhooks.leaseMs },
      logger: logger.child({ module: 'outbox' }),
      onOutcome: metrics.outboxOutcome,
    })
    const pipeline = createIngestionPipeline({
      events: metrics.timedEventStore(opts.wrapEventStore ? opts.wrapEventStore(stores.events) : stores.events),
      deadLetters: stores.deadLetters,
      counters: services.ingestionCounters,
      health,
      isolateAfterAttempts: config.ingestion.isolateAfterAttempts,
      logger,
      steps: [
        createGeoIpStep({ geoip: services.geoip, settingsOf: (projectId) => services.projects.projectById(projectId) }),
        createPersonsStep({
          persons: createSqlIngestionPersonStore(stores.meta),
          overrides: stores.personOverrides,
          cache: services.personData,
          groups: { store: createSqlIngestionGroupStore(stores.meta), ensureGroupTypes: services.groupTypes.ensureGroupTypes },
          logger: logger.child({ module: 'ingestion' }),
        }),
        createDefinitionsStep({
          store: createSqlDefinitionStore(stores.meta),
          groupTypeIndex: async (projectId, name) => (await services.groupTypes.list(projectId)).find((t) => t.groupType === name)?.groupTypeIndex,
          counters: services.ingestionCounters,
          logger: logger.child({ module: 'ingestion' }),
        }),
      ],
      afterStore: [
        createNotifyStep({ rules: notifications.notificationRules, outbox: notifications.outbox, siteUrl: notifications.siteUrl, onEnqueued: () => outboxSender && outboxSender.wake() }),
      ],
    })
    if (roles.has('worker')) {
      stores.queue.consume(pipeline, {
        maxBatch: config.ingestion.maxBatchEvents,
        maxWaitMs: config.ingestion.flushIntervalMs,
        retryDelayMs: config.ingestion.retryMinMs,
        retryMaxDelayMs: config.ingestion.retryMaxMs,
      })
    }
    replay = await createReplay(config, { meta: stores.meta, projects: services.projects, persons: services.persons, queries: services.queries, logger })
    const readiness = { ingestion: ingestionHealth, stores: stores.ping }
    const http = await buildServer(services, { logger, maxBodyBytes: config.http.maxBodyBytes, isReady: () => ready, readiness, metrics: metrics.registry, sdkAssets: posthogJsAssets(), publicSuccessLogLevel: config.log.publicSuccessLevel as Level, limits: config.http, replay, roles })
    ready = true
    // In the background: /_health and every route answer while it runs (reads miss until then).
    const warmUp: PersonCacheWarmUp | null = config.flags.warmPersonCache && roles.has('capture')
      ? startPersonCacheWarmUp({
          projectIds: async () => (await services.projects.listProjects()).map((p) => p.id),
          flagCache: services.flagCache,
          cache: services.personData,
          log: logger.child({ module: 'decide' }),
        })
      : null
    let closing: Promise<void> | null = null
    return {
      http,
      services,
      bootstrap,
      personCacheWarmUp: warmUp?.done ?? Promise.resolve({ entries: 0, ms: 0 }),
      ingestionHealth,
      replay,
      close() {
        closing ??= (async () => {
          ready = false
          await http.close()
          await warmUp?.stop()
          // Let the worker store what was accepted (bounded); the rest is redelivered on the next start.
          if (roles.has('worker')) await stores.queue.drain(5000)
          await replay?.close()
          if (outboxSender) await outboxSender.stop()
          await notifications.webhookClient.close()
          if (retention) await retention.stop()
          if (compaction) await compaction.stop()
          await stores.close()
        })()
        return closing
      },
    }
  } catch (err) {
    await replay?.close()
    await stores.close()
    throw err
  }
}

/** Where the installed posthog-js keeps its browser scripts, and its version (served at `/static/`). */
function posthogJsAssets(): SdkAssetOptions {
  const manifest = createRequire(import.meta.url).resolve('posthog-js/package.json')
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }
  return { dir: path.join(path.dirname(manifest), 'dist'), version }
}
