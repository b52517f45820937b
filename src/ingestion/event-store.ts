import type { ParsedProperties } from './event-properties.ts'

/** One event as stored: the result of the ingestion pipeline. */
export interface StoredEvent {
  uuid: string
  projectId: number
  event: string
  distinctId: string
  /**
   * Every property, as JSON object text. It stays serialised from capture to storage: the pipeline
   * never pays for a parse it does not need (steps that read properties parse them once per batch,
   * through `propertiesOf`).
   */
  properties: string
  /**
   * `properties` parsed, kept by the first step that read them (see event-properties.ts); the
   * event store ignores it. Undefined until then.
   */
  parsed?: ParsedProperties
  /**
   * The keys of `properties` the steps read, with their values, and a hash of its keys and their
   * types: capture's, carried by the queue message (step-properties.ts). Undefined for a message of
   * the previous format: the steps then read the parsed properties.
   */
  stepProperties?: Record<string, unknown>
  shape?: number
  elementsChain: string
  timestamp: Date
  createdAt: Date
  personId: string | null
  /**
   * Persons on events: the person's properties when the event was ingested, as JSON object text
   * (`{}` for personless events); null or absent until the persons step has run.
   */
  personProperties?: string | null
  /** `$group_0`..`$group_4`: the event's group key per group type index (absent or null: none). */
  groups?: ReadonlyArray<string | null>
}

export interface InsertBatchOptions {
  redelivered?: boolean
}

/**
 * The append-only event store (DuckDB embedded, ClickHouse at scale). Writes are set-based;
 * `uuid` is the idempotency key: inserting an event whose uuid is already stored is a no-op.
 */
export interface EventStore {
  /**
   * Appends a micro-batch; returns how many were new. `redelivered`: the batch may hold events
   * another worker process stored (it died before acknowledging them): every uuid is confirmed
   * against the stored events, not only those this process remembers storing.
   */
  insertBatch(events: StoredEvent[], opts?: InsertBatchOptions): Promise<{ inserted: number }>
  close(): Promise<void>
}
