import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { EventStore, StoredEvent } from '../../ingestion/event-store.ts'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { DuckDb } from './open-duckdb.ts'
import { MATERIALIZED_COLUMNS, materializedExtractSql, materializedValuesSql } from './materialized-properties.ts'
import { recentUuids, type RecentUuids } from './recent-uuids.ts'

export interface DuckDbEventStoreOptions {
  /** A private directory for the batch file DuckDB reads (one file, rewritten per batch). */
  stagingDir: string
  /**
   * How many of the latest stored uuids a new event is deduplicated against, at least (up to twice
   * this many; DEFAULT_DEDUP_WINDOW). Memory: 8-16 bytes per uuid of it (16.8 MB for a million).
   */
  dedupWindow?: number
}

/** The temporary table a batch is staged in (one per connection), and the columns it gives `events`. */
const STAGED = 'staged_events'
const STAGED_COLUMNS = ['uuid', 'project_id', 'event', 'distinct_id', 'properties', 'elements_chain', 'timestamp', 'created_at', 'person_id',
  'person_properties', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4', ...MATERIALIZED_COLUMNS].join(', ')

/** At 3,000 events/s the last 5.5 minutes to 11 minutes; at 100 events/s 2.8 to 5.6 hours. */
export const DEFAULT_DEDUP_WINDOW = 1_000_000

/**
 * DuckDB's CSV reader refuses longer lines unless told; most batches stay under it. Its buffer is
 * given as twice the line size: by default it is 16 times that, 32 MB allocated per insert, which
 * with the JSON work made an insert of 10,000 events of 2 KB need more than 192 MB of DuckDB's memory.
 */
const DEFAULT_MAX_LINE_BYTES = 2_000_000

/**
 * EventStore on embedded DuckDB. A batch is written to one tab-separated file (a JSON header, a
 * tab, the properties' JSON text, per line: JSON never holds a raw tab or newline) and DuckDB reads
 * it with `read_csv` and moves it with one `INSERT`: the parsing, conversion and JSON
 * work run in C++ on DuckDB's threads, not on the JS thread.
 *
 * Idempotency: an event whose uuid is among the latest `dedupWindow` (or more) stored ones is not
 * stored again; `DISTINCT ON` removes duplicates inside the batch. That covers what repeats a uuid:
 * the queue delivering a batch again after a failure or a restart, and SDKs resending a batch whose
 * answer they did not get (seconds to minutes later). The table has no uuid key: a key is an index
 * over every event ever stored, and with random (v4) uuids, which posthog-python sends, each insert
 * touched all of it: the index had to stay in memory (~50 bytes per event) and the insert cost grew
 * with the table, until at ~3M events inserts failed under the 256MB write limit
 * (bench/duckdb-insert.ts, `keyed` with UUIDS=v4). PostHog's own events table deduplicates only
 * rows of the same day (ReplacingMergeTree). The recent uuids are a filter in memory (see
 * recent-uuids.ts), rebuilt from the table at start; its hits are confirmed with one query over the
 * window's part of the table.
 */
export async function createDuckDbEventStore(db: DuckDb, opts: DuckDbEventStoreOptions): Promise<EventStore> {
  const c = db.connection
  await mkdir(opts.stagingDir, { recursive: true })
  const file = path.join(opts.stagingDir, 'batch.tsv')
  let buf = Buffer.allocUnsafe(1024 * 1024)
  const window = opts.dedupWindow ?? DEFAULT_DEDUP_WINDOW
  const recent = recentUuids(window)
  // Filled before the first insert (which waits for it); a failed fill is tried again by the next insert.
  let filled = false
  // On a connection of its own: a statement on the same connection would end the streamed result.
  const fillConnection = db.connect()
  const fill = async () => {
    await loadRecent(await fillConnection, recent, window)
    filled = true
  }
  let chain: Promise<unknown> = fill().catch(() => undefined)

  /** Encodes the batch into `buf` (grown as needed), leaving out `skip`; returns its length and longest line in bytes. */
  function encode(events: StoredEvent[], skip: ReadonlySet<string>): { bytes: number; longest: number } {
    let off = 0
    let longest = 0
    for (const e of events) {
      if (skip.size > 0 && skip.has(e.uuid)) continue
      const header = JSON.stringify([
        wellFormed(e.uuid),
        e.projectId,
        wellFormed(e.event),
        wellFormed(e.distinctId),
        e.timestamp.getTime(),
        e.createdAt.getTime(),
        wellFormed(e.elementsChain),
        e.personId === null ? null : wellFormed(e.personId),
        e.personProperties == null ? null : wellFormed(e.personProperties),
        ...groupColumns(e.groups),
      ])
      // Worst case 3 bytes per UTF-16 unit, plus the tab and the newline.
      const need = off + 3 * (header.length + e.properties.length) + 2
      if (need > buf.length) {
        const bigger = Buffer.allocUnsafe(Math.max(need, 2 * buf.length))
        buf.copy(bigger, 0, 0, off)
        buf = bigger
      }
      const start = off
      off += buf.write(header, off, 'utf8')
      buf[off++] = 0x09
      off += buf.write(e.properties, off, 'utf8')
      buf[off++] = 0x0a
      if (off - start > longest) longest = off - start
    }
    return { bytes: off, longest }
  }

  async function insert(events: StoredEvent[]): Promise<{ inserted: number }> {
    if (events.length === 0) return { inserted: 0 }
    if (!filled) await fill()
    const stored = await alreadyStored(events)
    const { bytes, longest } = encode(events, stored)
    if (bytes === 0) return { inserted: 0 }
    await writeFile(file, buf.subarray(0, bytes))
    let inserted = 0
    const maxLine = Math.max(DEFAULT_MAX_LINE_BYTES, longest + 1)
    // Header: [uuid, projectId, event, distinctId, timestampMs, createdAtMs, elementsChain, personId, personProperties, group0..group4].
    // The materialized property columns are filled here, on DuckDB's threads (one JSON parse per row).
    // The batch is staged in a temporary table, then stored with its session partials (the sessions
    // aggregate, migration 0011) in one transaction: a batch is never seen without its sessions.
    const values = materializedValuesSql('m').map((v, i) => `${v} AS ${MATERIALIZED_COLUMNS[i]}`)
    await c.run('BEGIN TRANSACTION')
    try {
      await c.run(`CREATE OR REPLACE TEMP TABLE ${STAGED} AS
        SELECT DISTINCT ON (uuid) * FROM (
          SELECT x[1]::UUID AS uuid, x[2]::INTEGER AS project_id, x[3] AS event, x[4] AS distinct_id, p AS properties, x[7] AS elements_chain,
            make_timestamptz(x[5]::BIGINT * 1000) AS timestamp, make_timestamptz(x[6]::BIGINT * 1000) AS created_at, x[8]::UUID AS person_id,
            x[9] AS person_properties, x[10] AS group_0, x[11] AS group_1, x[12] AS group_2, x[13] AS group_3, x[14] AS group_4,
            ${values.join(', ')}
          FROM (SELECT json_extract_string(h, ['$[0]', '$[1]', '$[2]', '$[3]', '$[4]', '$[5]', '$[6]', '$[7]', '$[8]', '$[9]', '$[10]', '$[11]', '$[12]', '$[13]']) AS x, p,
                  ${materializedExtractSql('p')} AS m
                FROM read_csv('${file.replace(/'/g, "''")}', delim = '\t', quote = '', escape = '', header = false,
                  auto_detect = false, max_line_size = ${maxLine}, buffer_size = ${maxLine * 2}, columns = {'h': 'VARCHAR', 'p': 'VARCHAR'})))`)
      const r = await c.run(`INSERT INTO events (${STAGED_COLUMNS}) SELECT ${STAGED_COLUMNS} FROM ${STAGED}`)
      await c.run(`INSERT INTO sessions SELECT * FROM session_partials('${STAGED}')`)
      await c.run(`DROP TABLE ${STAGED}`)
      await c.run('COMMIT')
      inserted = Number(r.rowsChanged)
    } catch (err) {
      await c.run('ROLLBACK').catch(() => undefined)
      throw err
    }
    for (const e of events) if (!stored.has(e.uuid)) recent.add(e.uuid, e.createdAt.getTime())
    return { inserted }
  }

  /** The uuids of `events` the table already has within the window (confirmed: the filter only says maybe). */
  async function alreadyStored(events: StoredEvent[]): Promise<Set<string>> {
    const maybe: string[] = []
    for (const e of events) if (recent.mayHave(e.uuid)) maybe.push(e.uuid)
    if (maybe.length === 0) return new Set()
    const list = maybe.map((u) => `'${u.replaceAll("'", "''")}'`).join(', ')
    // created_at of every uuid in the filter is at least its earliest: the scan skips older row groups.
    const found = await c.runAndReadAll(
      `SELECT uuid::VARCHAR AS uuid FROM events WHERE created_at >= make_timestamptz($1::BIGINT * 1000) AND uuid IN (${list})`,
      [recent.earliestMs()],
    )
    return new Set(found.getColumnsJS()[0] as string[] | undefined)
  }

  /**
   * `insert`, in halves when DuckDB runs out of memory: an insert's working memory grows with its rows
   * and its longest line (10,000 events of 2 KB fit under 32MB; one event of 19 MB needs more than
   * 256MB), so a micro-batch too large for the memory limit would otherwise fail on every delivery
   * and block ingestion. Halves already stored are not stored again when the rest fails and the
   * batch comes back (the window above). One event that does not fit alone (capture takes bodies up
   * to 20 MB) is failed as neither the store's fault nor surely the data's: the pipeline retries it a
   * few times, then dead-letters it (replayable), instead of retrying it forever.
   */
  async function insertFitting(events: StoredEvent[]): Promise<{ inserted: number }> {
    try {
      return await insert(events)
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('Out of Memory Error')) throw err
      if (events.length < 2) {
        const first = err.message.split('\n')[0]!.slice('Out of Memory Error: '.length)
        throw Object.assign(new Error(`event too large for DuckDB's memory limit (${first})`), { transient: null })
      }
      const half = events.length >>> 1
      const first = await insertFitting(events.slice(0, half))
      const second = await insertFitting(events.slice(half))
      return { inserted: first.inserted + second.inserted }
    }
  }

  return {
    // One connection and one batch file: batches are serialised.
    insertBatch(events) {
      const run = chain.then(() => insertFitting(events)).catch((err: unknown) => {
        throw markTransience(err)
      })
      chain = run.catch(() => undefined)
      return run
    },
    async close() {
      await chain
      await rm(file, { force: true })
    },
  }
}

/**
 * Fills `recent` with the uuids of the `window` events stored last (by created_at, the time capture
 * received them), in the order they were stored. Only the last day is looked at, so the scans skip
 * older row groups: past a restart the window is then at least that day. The cut-off is found on the
 * created_at column alone; the uuids are then streamed in table order, a chunk at a time, unsorted.
 */
async function loadRecent(c: DuckDBConnection, recent: RecentUuids, window: number): Promise<void> {
  const cutoff = await c.runAndReadAll(
    `SELECT epoch_ms(min(created_at))::BIGINT AS ms FROM (
       SELECT created_at FROM events
       WHERE created_at >= (SELECT max(created_at) FROM events) - INTERVAL 1 DAY
       ORDER BY created_at DESC LIMIT ${window})`,
  )
  const ms = cutoff.getRowObjects()[0]?.ms
  if (ms === null || ms === undefined) return
  const result = await c.stream(
    `SELECT uuid::VARCHAR, epoch_ms(created_at) FROM events WHERE created_at >= make_timestamptz($1::BIGINT * 1000)`,
    [ms],
  )
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const [uuids, created] = chunk.getColumns() as [string[], bigint[]]
    for (let i = 0; i < uuids.length; i++) recent.add(uuids[i]!, Number(created[i]))
  }
}

/**
 * Tells the ingestion pipeline whether a failed insert is the store's or the data's fault, with a
 * boolean `transient` on the error (left unset when unsure). DuckDB's errors carry their class as a
 * message prefix: I/O, a failed commit (`Could not write file ... No space left on device`), a closed
 * connection, or an invalidated database are the store's, to retry whole; conversion, invalid input
 * and constraint errors are about a row's values. A failed write of the batch file is an fs error
 * (ENOSPC, EIO...): the store's.
 */
function markTransience(err: unknown): unknown {
  if (!(err instanceof Error) || 'transient' in err) return err
  const message = err.message
  const code = (err as { code?: unknown }).code
  let transient: boolean | null = null
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) transient = true
  else if (/^(IO|TransactionContext|Connection|FATAL|Out of Memory|Interrupt) Error|No space left|Could not (write|read|open|create)|database has been invalidated|closed/i.test(message)) transient = true
  else if (/^(Conversion|Invalid Input|Constraint|Out of Range|Mismatch Type) Error/.test(message)) transient = false
  if (transient !== null) Object.assign(err, { transient })
  return err
}

const NO_GROUPS = [null, null, null, null, null] as const

/** The five group columns of an event (`$group_0..4`). */
function groupColumns(groups: ReadonlyArray<string | null> | undefined): ReadonlyArray<string | null> {
  if (groups === undefined) return NO_GROUPS
  const out: Array<string | null> = []
  for (let i = 0; i < 5; i++) {
    const g = groups[i]
    out.push(g === undefined || g === null ? null : wellFormed(g))
  }
  return out
}

/** Lone surrogates become U+FFFD (as a UTF-8 write would), so DuckDB's JSON reader accepts the header. */
function wellFormed(s: string): string {
  // Node 20 has both (ES2024); the project's lib setting predates them.
  const w = s as unknown as { isWellFormed(): boolean; toWellFormed(): string }
  return w.isWellFormed() ? s : w.toWellFormed()
}
