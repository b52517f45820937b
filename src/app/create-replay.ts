import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from '../config/load-config.ts'
import { openFileEventQueue } from '../queue/file-event-queue.ts'
import { openNatsEventQueue } from '../queue/nats-event-queue.ts'
import type { EventQueue } from '../queue/event-queue.ts'
import { createFileRecordingBlobStore } from '../storage/files/file-recording-blob-store.ts'
import { createSqlRecordingStore } from '../storage/sql/sql-recording-store.ts'
import { createSqlRecordingBlobStore } from '../storage/sql/sql-recording-blob-store.ts'
import type { SqlClient } from '../storage/sql/sql-client.ts'
import { createRecordingCaptureService } from '../modules/replay/recording-capture-service.ts'
import { recordingCaptureRoutes } from '../modules/replay/recording-capture-routes.ts'
import { createRecordingService, type RecordingService, type SessionEventMatcher } from '../modules/replay/recording-service.ts'
import { recordingRoutes } from '../modules/replay/recording-routes.ts'
import { startRecordingWorker } from '../modules/replay/recording-worker.ts'
import type { ProjectService } from '../modules/projects/project-service.ts'
import type { PersonService } from '../modules/persons/person-service.ts'
import type { QueryService } from '../modules/query/query-service.ts'
import { toPersonDetailJson } from '../modules/persons/person-json.ts'

/** Session replay as the composition root assembles it: its stores, worker and routes. */
export interface Replay {
  recordings: RecordingService
  /** Registers `/s/` in the public scope. */
  publicRoutes(scope: FastifyInstance): Promise<void>
  /** Registers the session_recordings API in the private scope. */
  privateRoutes(scope: FastifyInstance): Promise<void>
  /** Deletes the recordings past their project's retention now (also run on a timer); returns how many. */
  runRetention(now?: Date): Promise<number>
  /** Resolves once every queued block summary is in the metadata store, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<boolean>
  close(): Promise<void>
}

export interface ReplayDeps {
  meta: SqlClient
  projects: ProjectService
  persons: PersonService
  queries: QueryService
  logger: Logger
}

/**
 * Replay stores: the recording bytes (session files under `<dataDir>/recordings/sessions`, or rows of
 * the metadata database with TALLY_REPLAY_STORE=database, the default on PostgreSQL), the recording queue (block
 * summaries between `/s/` and the metadata worker) and the metadata rows in the MetaStore. The
 * recording queue is `<dataDir>/recordings/queue` embedded, and the JetStream stream
 * `<TALLY_NATS_STREAM>_RECORDINGS` with `TALLY_NATS_URL`, so that capture processes publish to it and
 * the worker processes consume it. The metadata worker and the retention timer run in the worker
 * role only (with `all`, in this process); an api-only process opens no recording queue.
 */
export async function createReplay(config: Pick<Config, 'storage' | 'replay' | 'roles'>, deps: ReplayDeps): Promise<Replay> {
  const log = deps.logger.child({ module: 'replay' })
  const dir = path.join(config.storage.dataDir, 'recordings')
  const { roles } = config
  const worker = roles.has('worker')
  const queue = roles.has('capture') || worker ? await openRecordingQueue(config, dir, log) : null
  // Either way both are read: blocks written under the other setting (or moved by `tally import`) stay playable.
  const blobs = createSqlRecordingBlobStore(deps.meta, createFileRecordingBlobStore(path.join(dir, 'sessions')), config.replay.store)
  const store = createSqlRecordingStore(deps.meta)
  const capture = queue ? createRecordingCaptureService({ projects: deps.projects, blobs, queue }) : null
  const recordings = createRecordingService({ store, blobs, events: sessionEventMatcher(deps.queries) })
  if (worker && queue) startRecordingWorker({ queue, store, logger: log })
  deps.persons.setRecordingEraser((projectId, distinctIds) => recordings.deleteForDistinctIds(projectId, distinctIds))

  const runRetention = async (now = new Date()) => {
    const n = await recordings.deleteExpired(now)
    if (n > 0) log.info({ deleted: n }, 'expired recordings deleted')
    return n
  }
  const timer = worker
    ? setInterval(() => {
        runRetention().catch((err) => log.warn({ err }, 'recording retention failed; retried on the next tick'))
      }, config.replay.retentionCheckMs)
    : null
  timer?.unref()

  return {
    recordings,
    async publicRoutes(scope) {
      if (!capture) throw new Error('recording capture needs the capture role')
      await scope.register(recordingCaptureRoutes, {
        capture,
        maxBodyBytes: config.replay.maxBodyBytes,
        maxDecodedBytes: config.replay.maxBodyBytes * 4,
        memoryBudgetBytes: config.replay.memoryBudgetBytes,
      })
    },
    async privateRoutes(scope) {
      await scope.register(recordingRoutes, {
        recordings,
        // A recording's distinct id may have no person (yet, or any more): then `person` is null.
        person: async (project, uuid) => deps.persons.get(project, uuid).then(toPersonDetailJson, () => null),
      })
    },
    runRetention,
    drain: async (timeoutMs) => (queue ? queue.drain(timeoutMs) : true),
    async close() {
      if (timer) clearInterval(timer)
      deps.persons.setRecordingEraser(null)
      await queue?.close()
    },
  }
}

/** The recording queue: on JetStream beside the event queue when there is one, else in the data dir. */
function openRecordingQueue(config: Pick<Config, 'storage'>, dir: string, log: Logger): Promise<EventQueue> {
  const { nats } = config.storage
  if (!nats) return openFileEventQueue({ dir: path.join(dir, 'queue'), logger: log })
  return openNatsEventQueue({
    servers: [...nats.servers],
    stream: `${nats.stream}_RECORDINGS`,
    consumer: nats.consumer,
    replicas: nats.replicas,
    maxBacklogBytes: config.storage.queueMaxBacklogBytes,
    ackWaitMs: nats.ackWaitMs,
    publishTimeoutMs: nats.publishTimeoutMs,
    name: 'tally-recordings',
    logger: log,
  })
}

/** Sessions with a matching event, from the EventStore through PostHog's EventsQuery (compiled, never text). */
function sessionEventMatcher(queries: QueryService): SessionEventMatcher {
  return {
    async sessionsWithEvent(project, condition, range) {
      const res = await queries.run(project, {
        kind: 'EventsQuery',
        select: ['properties.$session_id', 'count()'],
        event: condition.event,
        properties: condition.properties,
        after: range.from?.toISOString() ?? '-3650d',
        before: range.to?.toISOString() ?? null,
        limit: 50_000,
      })
      const rows = (res as unknown as { results: unknown[][] }).results
      return rows.map((r) => r[0]).filter((id): id is string => typeof id === 'string' && id !== '')
    },
  }
}
