import type { EventStore } from '../../ingestion/event-store.ts'
import type { DeadLetterStore } from '../../ingestion/dead-letter-store.ts'
import type { PersonOverrideStore } from '../../ingestion/person-store.ts'
import type { EventReadStore } from '../../modules/events/event-read-store.ts'
import type { PersonEventStore } from '../../modules/persons/person-store.ts'
import type { ActionEventReads } from '../../modules/actions/action-event-reads.ts'
import type { QueryEngine } from '../../modules/query/query-engine.ts'
import { createClickHouseDeadLetterStore } from './clickhouse-dead-letter-store.ts'
import { createClickHouseEventReadStore } from './clickhouse-event-read-store.ts'
import { createClickHouseEventExportReads } from './clickhouse-event-export-reads.ts'
import type { EventExportReads } from '../../modules/events/event-export-reads.ts'
import { createClickHouseEventStore } from './clickhouse-event-store.ts'
import { createClickHousePersonEventStore } from './clickhouse-person-event-store.ts'
import { createClickHousePersonOverrideStore } from './clickhouse-person-override-store.ts'
import { createClickHouseQueryEngine } from './clickhouse-query-engine.ts'
import { createClickHouseActionReads } from './clickhouse-action-reads.ts'
import { openClickHouse, type ClickHouse } from './open-clickhouse.ts'
import { createClickHouseEventRetention } from './clickhouse-event-retention.ts'
import type { EventRetentionStore } from '../../modules/retention/event-retention-store.ts'

export interface ClickHouseStores {
  stores: {
    events: EventStore
    eventReads: EventReadStore
    eventExports: EventExportReads
    deadLetters: DeadLetterStore
    personOverrides: PersonOverrideStore
    personEvents: PersonEventStore
    actionEvents: ActionEventReads
    queryEngine: QueryEngine
    eventRetention: EventRetentionStore
  }
  /** The database itself, for readers the composition root builds (the event dump). */
  clickhouse: ClickHouse
  /** `/_ready`'s check: a query on the server. */
  ping(): Promise<unknown>
  close(): Promise<void>
}

/**
 * Every event-side port on one ClickHouse database (TALLY_CLICKHOUSE_URL), migrated. The HTTP
 * connections are shared: queries get `queryConcurrency` of them at most (the engine's own limit),
 * ingestion, reads and the readiness check the rest.
 */
export async function openClickHouseStores(
  url: string,
  migrationsDir: string,
  opts: { dedupWindow?: number; queryConcurrency: number; queryThreads?: number; queryMemoryLimit?: { text: string; bytes: number } | null },
): Promise<ClickHouseStores> {
  const ch = await openClickHouse(url, migrationsDir, { maxConnections: opts.queryConcurrency + 6 })
  const events = await createClickHouseEventStore(ch, { dedupWindow: opts.dedupWindow })
  return {
    stores: {
      events,
      eventReads: createClickHouseEventReadStore(ch),
      eventExports: createClickHouseEventExportReads(ch),
      deadLetters: createClickHouseDeadLetterStore(ch),
      personOverrides: createClickHousePersonOverrideStore(ch),
      personEvents: createClickHousePersonEventStore(ch),
      actionEvents: createClickHouseActionReads(ch),
      queryEngine: createClickHouseQueryEngine(ch, { concurrency: opts.queryConcurrency, threads: opts.queryThreads, memoryLimit: opts.queryMemoryLimit ?? null }),
      eventRetention: createClickHouseEventRetention(ch),
    },
    clickhouse: ch,
    ping: () => ch.ping(),
    async close() {
      await events.close()
      await ch.close()
    },
  }
}
