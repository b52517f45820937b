import type { EventStore, StoredEvent } from '../../ingestion/event-store.ts'
import { eventRowsText } from './clickhouse-event-rows.ts'
import { recentUuids, type RecentUuids } from '../duckdb/recent-uuids.ts'
import type { ClickHouse } from './open-clickhouse.ts'
import { intLiteral, uuidLiteral } from './clickhouse-literals.ts'

export interface ClickHouseEventStoreOptions {
  /** How many of the latest stored uuids a new event is checked against, at least (as DuckDB's). */
  dedupWindow?: number
}

const DEFAULT_DEDUP_WINDOW = 1_000_000
/** uuids looked up per statement (~25 bytes each). */
const CONFIRM_SLICE = 2000

/**
 * EventStore on ClickHouse: a batch is one INSERT (JSONEachRow over HTTP) into `events`.
 *
 * A uuid is stored once (docs/clickhouse.md): duplicates inside a batch are dropped here (the first
 * wins), and a uuid among the latest `dedupWindow` stored ones is looked up in the table before the
 * insert and left out when it is there. The uuids of a batch enter that window before the batch is
 * sent: an insert that failed, or whose answer was lost after the server stored it, comes back
 * (the worker retries whole batches) and each of its uuids is then confirmed against the table, so a
 * redelivered batch is never stored twice. A batch the queue says was delivered before (a worker
 * process that stored it died before acknowledging, and this process got it) is confirmed against the
 * table whole: this process's window knows only its own inserts. Behind that, the ReplacingMergeTree collapses rows whose
 * whole sort key (project, day, event, distinct id, uuid) repeats, in its background merges.
 *
 * The rows are written as JSONEachRow text straight from the properties' text (clickhouse-event-rows.ts):
 * the top-level key/value arrays and the materialized `mat_*` columns hold exactly the text DuckDB's
 * `json_extract_string` gives, without a parse of the properties.
 */
export async function createClickHouseEventStore(ch: ClickHouse, opts: ClickHouseEventStoreOptions = {}): Promise<EventStore> {
  const window = opts.dedupWindow ?? DEFAULT_DEDUP_WINDOW
  const recent = recentUuids(window)
  let filled = false
  const fill = async () => {
    await loadRecent(ch, recent, window)
    filled = true
  }
  let chain: Promise<unknown> = fill().catch(() => undefined)

  async function insert(events: StoredEvent[], redelivered: boolean): Promise<{ inserted: number }> {
    if (events.length === 0) return { inserted: 0 }
    if (!filled) await fill()
    const unique = new Map<string, StoredEvent>()
    for (const e of events) if (!unique.has(key(e))) unique.set(key(e), e)
    const stored = await alreadyStored([...unique.values()], redelivered)
    const fresh = [...unique.values()].filter((e) => !stored.has(key(e)))
    if (fresh.length === 0) return { inserted: 0 }
    // Into the window first: if the insert fails (or its answer is lost), the retry confirms them.
    for (const e of fresh) recent.add(key(e), e.createdAt.getTime())
    await ch.insertJsonLines('events', eventRowsText(fresh))
    return { inserted: fresh.length }
  }

  /**
   * The uuids of `events` the table already has: only those the window may hold are looked up,
   * all of them when the batch was delivered before (another worker may have stored it).
   */
  async function alreadyStored(events: StoredEvent[], all: boolean): Promise<Set<string>> {
    const maybe = all ? events : events.filter((e) => recent.mayHave(key(e)))
    const literals = maybe.map((e) => uuidLiteral(e.uuid)).filter((l): l is string => l !== null)
    if (literals.length === 0) return new Set()
    const projects = [...new Set(maybe.map((e) => intLiteral(e.projectId)))]
    const found = new Set<string>()
    // In slices: 10,000 literals would pass the server's max_query_size (256 KiB by default).
    for (let i = 0; i < literals.length; i += CONFIRM_SLICE) {
      const rows = await ch.query<{ u: string }>(
        `SELECT DISTINCT toString(uuid) AS u FROM events WHERE project_id IN (${projects.join(', ')}) AND uuid IN (${literals.slice(i, i + CONFIRM_SLICE).join(', ')})`,
      )
      for (const r of rows) found.add(r.u)
    }
    return new Set(maybe.map(key).filter((u) => found.has(u)))
  }

  return {
    // Batches are serialised: the window check and the insert of one batch see the one before.
    insertBatch(events, opts) {
      const run = chain.then(() => insert(events, opts?.redelivered ?? false))
      chain = run.catch(() => undefined)
      return run
    },
    async close() {
      await chain
    },
  }
}

/** The uuid as the table gives it back (lower case): the key of the window and of a batch. */
const key = (e: StoredEvent): string => e.uuid.toLowerCase()

/**
 * Fills `recent` with the uuids of the `window` events stored last (by created_at), looking at the
 * last day only, so that a restart keeps deduplicating redeliveries of what it stored before.
 */
async function loadRecent(ch: ClickHouse, recent: RecentUuids, window: number): Promise<void> {
  const rows = await ch.query<{ u: string; c: string }>(
    `SELECT toString(uuid) AS u, created_at_ms AS c FROM events
     WHERE created_at >= (SELECT max(created_at) FROM events) - 86400
     ORDER BY created_at_ms DESC LIMIT ${intLiteral(window)}`,
  )
  for (let i = rows.length - 1; i >= 0; i--) recent.add(rows[i]!.u, Number(rows[i]!.c))
}
