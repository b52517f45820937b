import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { sizeBytes, type Config } from '../config/load-config.ts'
import { openPgliteSqlClient } from '../storage/pglite/pglite-sql-client.ts'
import { initPgliteDataDir } from '../storage/pglite/init-pglite-data-dir.ts'
import { openPostgresSqlClient } from '../storage/postgres/postgres-sql-client.ts'
import { runMigrations } from '../storage/sql/run-migrations.ts'
import { openDuckDb } from '../storage/duckdb/open-duckdb.ts'
import { createDuckDbEventStore } from '../storage/duckdb/duckdb-event-store.ts'
import { createDuckDbEventReadStore } from '../storage/duckdb/duckdb-event-read-store.ts'
import { createDuckDbEventExportReads } from '../storage/duckdb/duckdb-event-export-reads.ts'
import { createDuckDbEventDumpReads } from '../storage/duckdb/duckdb-event-dump-reads.ts'
import { createClickHouseEventDumpReads } from '../storage/clickhouse/clickhouse-event-dump-reads.ts'
import type { EventDumpReads } from '../modules/events/event-dump-reads.ts'
import { createDuckDbDeadLetterStore } from '../storage/duckdb/duckdb-dead-letter-store.ts'
import { createDuckDbActionQueries } from '../storage/duckdb/duckdb-action-queries.ts'
import { createDuckDbPersonOverrideStore } from '../storage/duckdb/duckdb-person-override-store.ts'
import { createDuckDbPersonEventStore } from '../storage/duckdb/duckdb-person-event-store.ts'
import { createDuckDbQueryEngine } from '../storage/duckdb/duckdb-query-engine.ts'
import type { PersonOverrideStore } from '../ingestion/person-store.ts'
import { openClickHouseStores } from '../storage/clickhouse/open-clickhouse-stores.ts'
import { createDuckDbEventRetention } from '../storage/duckdb/duckdb-event-retention.ts'
import { createDuckDbSessionCompaction } from '../storage/duckdb/duckdb-session-compaction.ts'
import { openFileEventQueue } from '../queue/file-event-queue.ts'
import { openNatsEventQueue } from '../queue/nats-event-queue.ts'
import type { EventQueue } from '../queue/event-queue.ts'
import { localChangeBus } from '../shared/change-bus.ts'
import { openPgChangeBus } from '../storage/postgres/pg-change-bus.ts'
import type { Stores } from './create-services.ts'
import type { Logger } from 'pino'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const MIGRATIONS = {
  metadata: path.join(ROOT, 'migrations/metadata'),
  duckdb: path.join(ROOT, 'migrations/events/duckdb'),
  clickhouse: path.join(ROOT, 'migrations/events/clickhouse'),
}

export interface OpenedStores extends Stores {
  /** A cheap query per store (`/_ready`): resolves when the store answers. */
  ping: Record<string, () => Promise<unknown>>
  /** Person-id overrides in the events database (written by the ingestion persons step). */
  personOverrides: PersonOverrideStore
  /** The whole event store read back (`tally export`). */
  eventDump: EventDumpReads
  /** Bytes each embedded store holds in this process's memory, by store (`/_metrics`). */
  memory(): Promise<Record<string, number>>
  close(): Promise<void>
}

/** Opens the configured stores and applies their migrations. The only place that picks adapters. */
export async function createAdapters(
  config: Pick<Config, 'storage'> & Partial<Pick<Config, 'query'>>,
  /** `events: false`: no event store (a capture process, a CLI command); `queue` defaults to `events`. */
  parts: { events?: boolean; queue?: boolean; logger?: Logger } = {},
): Promise<OpenedStores> {
  const dir = config.storage.dataDir
  const metaDir = path.join(dir, 'metadata')
  const fresh = !existsSync(path.join(metaDir, 'PG_VERSION'))
  if (fresh && !config.storage.metadataUrl) await initPgliteDataDir(metaDir, MIGRATIONS.metadata)
  const pglite = config.storage.metadataUrl ? null : await openPgliteSqlClient(metaDir, { sharedBuffers: config.storage.pgliteSharedBuffers })
  const meta = pglite ?? openPostgresSqlClient(config.storage.metadataUrl!, { statementTimeoutMs: config.storage.statementTimeoutMs })
  const metaMemory = (): Record<string, number> => (pglite ? { pglite: pglite.memoryBytes() } : {})
  try {
    await runMigrations(meta, MIGRATIONS.metadata)
  } catch (err) {
    await meta.close()
    throw err
  }
  // Several processes share PostgreSQL: each hears the others' cache invalidations through it.
  const changes = config.storage.metadataUrl ? openPgChangeBus(config.storage.metadataUrl, parts.logger?.child({ module: 'changes' })) : localChangeBus()
  if (parts.events === false) {
    const queue = parts.queue ? await openQueue(config, parts.logger).catch(async (err: unknown) => {
      await changes.close()
      await meta.close()
      throw err
    }) : notOpened<EventQueue>('event queue')
    const noEvents = {
      insertBatch: async () => {
        throw new Error('event store not opened')
      },
      close: async () => {},
    }
    return {
      meta,
      events: noEvents,
      queue,
      eventReads: notOpened('event read store'),
      eventExports: notOpened('event export reads'),
      eventDump: notOpened('event dump reads'),
      deadLetters: notOpened('dead-letter store'),
      actionEvents: notOpened('action event reads'),
      personOverrides: notOpened('person overrides'),
      personEvents: notOpened('person events'),
      queryEngine: notOpened('query engine'),
      eventRetention: notOpened('event retention'),
      ping: { metadata: () => meta.query('SELECT 1') },
      memory: async () => ({ ...metaMemory() }),
      changes,
      async close() {
        if (parts.queue) await queue.close()
        await changes.close()
        await meta.close()
      },
    }
  }
  if (config.storage.clickhouseUrl) {
    try {
      const ch = await openClickHouseStores(config.storage.clickhouseUrl, MIGRATIONS.clickhouse, {
        dedupWindow: config.storage.dedupWindowEvents,
        queryConcurrency: config.query?.concurrency ?? 4,
        queryThreads: config.query?.threads,
        cluster: config.storage.clickhouseCluster,
        queryMemoryLimit: memoryLimit(config.storage.clickhouseQueryMemoryLimit),
      })
      const queue = await openQueueUnless(parts.queue === false, config, parts.logger).catch(async (err: unknown) => {
        await ch.close()
        throw err
      })
      return {
        meta,
        queue,
        changes,
        ...ch.stores,
        eventDump: createClickHouseEventDumpReads(ch.clickhouse),
        ping: { metadata: () => meta.query('SELECT 1'), events: ch.ping },
        memory: async () => ({ ...metaMemory() }),
        async close() {
          await queue.close()
          await ch.close()
          await changes.close()
          await meta.close()
        },
      }
    } catch (err) {
      await changes.close()
      await meta.close()
      throw err
    }
  }
  const duck = await openDuckDb(path.join(dir, 'events', 'events.duckdb'), MIGRATIONS.duckdb, {
    memoryLimit: config.storage.duckdbMemoryLimit,
    writeMemoryLimit: config.storage.duckdbWriteMemoryLimit,
    writeThreads: config.storage.duckdbWriteThreads,
    idleTrimMs: config.storage.duckdbIdleTrimSeconds * 1000,
    queryThreads: config.query?.threads,
    threadNice: config.query?.nice,
  })
  const events = await createDuckDbEventStore(duck, {
    stagingDir: path.join(dir, 'events', 'staging'),
    dedupWindow: config.storage.dedupWindowEvents,
  })
  // Reads and dead letters get their own connections: they never queue behind the ingestion writer.
  const eventReads = createDuckDbEventReadStore(await duck.connect({ reads: true }))
  // An export streams on a connection of its own, closed when it ends.
  const eventExports = createDuckDbEventExportReads({ connect: () => duck.connect({ reads: true }), disconnect: (c) => duck.disconnect(c) })
  const deadLetters = createDuckDbDeadLetterStore(await duck.connect())
  const actionEvents = createDuckDbActionQueries(await duck.connect({ reads: true }))
  const personOverrides = createDuckDbPersonOverrideStore(await duck.connect())
  const personEvents = createDuckDbPersonEventStore(await duck.connect())
  // Queries get a pool of their own connections, one per query allowed at once.
  const eventRetention = createDuckDbEventRetention(await duck.connect())
  // Its own connection: its transactions run beside ingestion's appends (duckdb-session-compaction.ts).
  const sessionCompaction = createDuckDbSessionCompaction(await duck.connect())
  const queryEngine = createDuckDbQueryEngine(() => duck.connect({ reads: true }), { poolSize: config.query?.concurrency ?? 4, memoryLimit: config.storage.duckdbMemoryLimit })
  const queue = await openQueueUnless(parts.queue === false, config, parts.logger)
  // Its own connection: the check never waits behind an ingestion batch.
  const pingConnection = await duck.connect({ monitoring: true })
  return {
    meta,
    events,
    queue,
    eventReads,
    eventExports,
    eventDump: createDuckDbEventDumpReads({ connect: () => duck.connect({ reads: true }), disconnect: (c) => duck.disconnect(c) }),
    deadLetters,
    actionEvents,
    personOverrides,
    personEvents,
    queryEngine,
    eventRetention,
    sessionCompaction,
    changes,
    ping: {
      metadata: () => meta.query('SELECT 1'),
      events: () => pingConnection.run('SELECT 1'),
    },
    async memory() {
      // A scrape during a store outage still answers, without DuckDB's figure.
      const rows = await pingConnection.runAndReadAll('SELECT sum(memory_usage_bytes)::DOUBLE AS b FROM duckdb_memory()').then(
        (r) => r.getRowObjects(),
        () => null,
      )
      return { ...metaMemory(), ...(rows ? { duckdb: Number(rows[0]?.b ?? 0) } : {}) }
    },
    async close() {
      // The queue first: it stops the ingestion worker after its in-flight batch.
      await queue.close()
      await events.close()
      await duck.close()
      await changes.close()
      await meta.close()
    },
  }
}

/** The event queue: NATS JetStream when `TALLY_NATS_URL` is set, else the segment log in the data dir. */
function openQueue(config: Pick<Config, 'storage'>, logger: Logger | undefined): Promise<EventQueue> {
  const { storage } = config
  const queueLogger = logger?.child({ module: 'queue' })
  if (storage.nats) {
    return openNatsEventQueue({
      servers: [...storage.nats.servers],
      stream: storage.nats.stream,
      consumer: storage.nats.consumer,
      replicas: storage.nats.replicas,
      maxBacklogBytes: storage.queueMaxBacklogBytes,
      ackWaitMs: storage.nats.ackWaitMs,
      publishTimeoutMs: storage.nats.publishTimeoutMs,
      logger: queueLogger,
    })
  }
  return openFileEventQueue({
    dir: path.join(storage.dataDir, 'queue'),
    segmentBytes: storage.queueSegmentBytes,
    maxBacklogBytes: storage.queueMaxBacklogBytes,
    logger: queueLogger,
  })
}

/** The event queue, or (a command that reads events only) a stand-in whose close does nothing. */
async function openQueueUnless(skip: boolean, config: Pick<Config, 'storage'>, logger: Logger | undefined): Promise<EventQueue> {
  if (!skip) return openQueue(config, logger)
  const none = notOpened<EventQueue>('event queue')
  return new Proxy(none, { get: (t, prop) => (prop === 'close' ? async () => {} : Reflect.get(t, prop)) })
}

/** A stand-in for a store a command did not open: any use is a bug and says so. */
function notOpened<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: (_t, prop) => (prop === 'then' ? undefined : () => {
      throw new Error(`${name} not opened`)
    }),
  })
}

/** A size setting (`2GB`) with its bytes, or null when unset. */
function memoryLimit(size: string | null): { text: string; bytes: number } | null {
  return size === null ? null : { text: size, bytes: sizeBytes(size)! }
}
