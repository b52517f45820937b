import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { EventStore } from '../ingestion/event-store.ts'
import type { IngestionHealth } from '../ingestion/ingestion-health.ts'
import type { Services } from './create-services.ts'
import type { EventQueue } from '../queue/event-queue.ts'
import type { OutboxSenderDeps } from '../modules/notifications/outbox-sender.ts'
import type { RetentionStats } from '../modules/retention/retention-job.ts'
import type { SessionCompactionStats } from '../modules/session-aggregate/session-compaction-job.ts'

/**
 * The Prometheus registry: process metrics (memory, CPU, event-loop lag, GC) and Tally's own, read
 * from the services when scraped (pull), so the hot paths only bump plain counters.
 */
export function createMetrics(
  services: Services,
  queue: EventQueue,
  ingestion: () => IngestionHealth,
  storeMemory: () => Promise<Record<string, number>>,
  background: { retention?: () => RetentionStats; sessionCompaction?: () => SessionCompactionStats } = {},
): { registry: Registry; timedEventStore(store: EventStore): EventStore; outboxOutcome: OutboxSenderDeps['onOutcome'] } {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })

  new Gauge({
    name: 'tally_ingestion_blocked',
    help: 'Whether a part of ingestion is blocked (1) or working (0): the queue cannot write, or the worker cannot store',
    labelNames: ['component'] as const,
    registers: [registry],
    collect() {
      const { components } = ingestion()
      for (const component of ['queue', 'event_store'] as const) this.set({ component }, components[component] ? 1 : 0)
    },
  })
  new Gauge({
    name: 'tally_store_memory_bytes',
    help: "Memory an embedded store holds inside Tally's process: DuckDB's buffer manager, PGlite's WebAssembly memory",
    labelNames: ['store'] as const,
    registers: [registry],
    async collect() {
      for (const [store, bytes] of Object.entries(await storeMemory())) this.set({ store }, bytes)
    },
  })
  const storeBatch = new Histogram({
    name: 'tally_event_store_batch_seconds',
    help: 'Time to write one micro-batch into the event store, by outcome (ok or error)',
    labelNames: ['outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  })

  new Counter({
    name: 'tally_ingestion_events_total',
    help: 'Events by outcome and reason: ok/accepted (captured, on disk), ok/stored, drop/<reason>, dlq/<reason>, retry/<reason>',
    labelNames: ['outcome', 'reason'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const [key, n] of Object.entries(services.ingestionCounters.snapshot())) {
        const [outcome, reason] = key.split(':', 2) as [string, string]
        this.inc({ outcome, reason }, n)
      }
    },
  })
  const counterOf = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset()
        this.inc(read())
      },
    })
  counterOf('tally_queue_published_total', 'Events made durable by the queue since start', () => queue.stats().published)
  counterOf('tally_queue_acked_total', 'Events acknowledged by the ingestion worker since start', () => queue.stats().acked)
  counterOf('tally_queue_flushes_total', 'Group commits (one write and fsync each) since start', () => queue.stats().flushes)
  counterOf('tally_queue_failed_batches_total', 'Worker batches that failed and will be delivered again', () => queue.stats().failedBatches)
  const gaugeOf = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read())
      },
    })
  gaugeOf('tally_queue_backlog_events', 'Events made durable by the queue and not yet acknowledged by the ingestion worker', () => queue.backlog().events)
  gaugeOf('tally_queue_backlog_bytes', 'Bytes of the queue log not yet acknowledged by the ingestion worker', () => queue.backlog().bytes)
  gaugeOf(
    'tally_ingestion_lag_seconds',
    'Age of the oldest event accepted but not yet processed by the ingestion worker (0 when none)',
    () => queue.backlog().oldestAgeMs / 1000,
  )

  counterOf('tally_decide_evaluations_total', 'Flag evaluations for /decide and /flags', () => services.decide.stats().evaluations)
  counterOf(
    'tally_decide_errors_total',
    'Flag evaluations answered with errorsWhileComputingFlags (a store read failed)',
    () => services.decide.stats().errors,
  )
  new Gauge({
    name: 'tally_person_cache_hit_ratio',
    help: 'Hits over hits and misses of the person cache /decide reads, since start',
    registers: [registry],
    collect() {
      const { hits, misses } = services.personData.stats()
      this.set(hits + misses === 0 ? 0 : hits / (hits + misses))
    },
  })
  new Gauge({
    name: 'tally_person_cache_entries',
    help: 'Persons and groups held by the person cache',
    registers: [registry],
    collect() {
      this.set(services.personData.stats().entries)
    },
  })
  gaugeOf('tally_event_exports_running', 'Event exports streaming now', () => services.eventExports.stats().running)
  counterOf('tally_event_export_rows_total', 'Events written by event exports since start', () => services.eventExports.stats().rows)
  counterOf('tally_event_exports_cancelled_total', 'Event exports stopped before their end (the client went away, or a failure)', () => services.eventExports.stats().cancelled)
  if (background.retention) {
    const stats = background.retention
    gaugeOf('tally_retention_last_run_timestamp_seconds', 'When the retention job last deleted past projects\' event_retention_days (0: not yet)', () => (stats().lastRunAt?.getTime() ?? 0) / 1000)
    gaugeOf('tally_retention_last_deleted_events', 'Events the retention job\'s last pass deleted', () => stats().lastDeletedEvents)
    counterOf('tally_retention_deleted_events_total', 'Events deleted by the retention job since start', () => stats().deletedEvents)
    counterOf('tally_retention_deleted_person_overrides_total', 'Person overrides the retention job removed since start: no stored event of their old person was left', () => stats().deletedPersonOverrides)
    counterOf('tally_retention_deleted_dead_letters_total', 'Dead letters deleted by the retention job since start', () => stats().deletedDeadLetters)
  }
  if (background.sessionCompaction) {
    const stats = background.sessionCompaction
    gaugeOf('tally_session_partials', 'Partial rows of the sessions aggregate after the compaction\'s last step (0: no step yet)', () => stats().partials ?? 0)
    counterOf('tally_session_compaction_merged_sessions_total', 'Sessions whose partials the compaction merged into one row, since start', () => stats().mergedSessions)
    counterOf('tally_session_compaction_removed_partials_total', 'Partial rows of the sessions aggregate the compaction removed by merging, since start', () => stats().removedPartials)
  }
  const outboxMessages = new Counter({
    name: 'tally_webhook_messages_total',
    help: 'Outgoing webhook messages by channel (chat, destination:<id>) and outcome: sent, retried, failed (dead-lettered), dropped (over the backlog limit)',
    labelNames: ['channel', 'outcome'] as const,
    registers: [registry],
  })
  new Gauge({
    name: 'tally_webhook_pending_messages',
    help: 'Outgoing webhook messages waiting to be sent, by channel',
    labelNames: ['channel'] as const,
    registers: [registry],
    async collect() {
      this.reset()
      const pending = await services.notifications.outbox.pendingByChannel().catch(() => new Map())
      for (const [channel, counts] of pending) this.set({ channel }, counts.pending)
    },
  })
  return {
    registry,
    outboxOutcome: (channel, outcome, count) => outboxMessages.inc({ channel, outcome }, count),
    timedEventStore: (store) => ({
      async insertBatch(events, opts) {
        const stop = storeBatch.startTimer()
        try {
          const result = await store.insertBatch(events, opts)
          stop({ outcome: 'ok' })
          return result
        } catch (err) {
          stop({ outcome: 'error' })
          throw err
        }
      },
      close: () => store.close(),
    }),
  }
}
