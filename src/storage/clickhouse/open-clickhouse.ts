import { createHash } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { ClickHouseLogLevel, createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client'
import { markClickHouseTransience } from './clickhouse-errors.ts'
import { stringLiteral } from './clickhouse-literals.ts'
import { clusterStatement, createDatabaseStatement, ddlAlreadyDone } from './open-clickhouse-cluster.ts'
import { clickHouseReplicas, replicaUnavailable, type ClickHouseReplicas } from './open-clickhouse-replicas.ts'
import { parseClickHouseUrls } from './open-clickhouse-url.ts'

/** A database on a ClickHouse server, as the event-side adapters use it. */
export interface ClickHouse {
  readonly database: string
  /** Rows of a SELECT (JSON); 64-bit integers come back as strings (ClickHouse's JSON). */
  query<R = Record<string, unknown>>(sql: string, opts?: QueryOptions): Promise<R[]>
  /** Rows of a SELECT with the result's column names and ClickHouse types. */
  queryWithMeta(sql: string, opts?: QueryOptions): Promise<{ meta: Array<{ name: string; type: string }>; data: Record<string, unknown>[] }>
  /**
   * Rows of a SELECT as they arrive (JSONEachRow), in the batches the HTTP stream delivers; the
   * query runs only while the caller iterates, and is killed in the server when the caller stops early
   * or `signal` aborts.
   */
  stream<R = Record<string, unknown>>(sql: string, opts: QueryOptions & { queryId: string }): AsyncIterable<R[]>
  /** A statement without result rows (DDL, ALTER, INSERT ... SELECT). */
  exec(sql: string, opts?: QueryOptions): Promise<void>
  /** Inserts rows (JSONEachRow). */
  insert(table: string, rows: readonly Record<string, unknown>[]): Promise<void>
  /** Inserts rows given as JSONEachRow text in UTF-8 (one JSON object a line), sent as it is. */
  insertJsonLines(table: string, text: Buffer): Promise<void>
  /** Waits until the mutations of `table` started so far are done (18.16 has no mutations_sync). */
  awaitMutations(table: string, timeoutMs?: number): Promise<void>
  /** Cancels a running query (KILL QUERY ... ASYNC: it stops at its next block; the caller does not wait). */
  kill(queryId: string): Promise<void>
  ping(): Promise<void>
  close(): Promise<void>
}

export interface QueryOptions {
  settings?: ClickHouseSettings
  queryId?: string
  signal?: AbortSignal
}

export interface ClickHouseOptions {
  /** Simultaneous HTTP connections to each server (queries, inserts, pings). */
  maxConnections?: number
  /** How long one request may take before the client gives up (ms). */
  requestTimeoutMs?: number
  /**
   * TALLY_CLICKHOUSE_CLUSTER: the cluster (`remote_servers`) whose replicas hold the tables. The
   * tables are Replicated*MergeTree and the migrations run ON CLUSTER (open-clickhouse-cluster.ts).
   */
  cluster?: string | null
}

/**
 * Connects to `url` (`http://user:password@host:8123/database`, or a comma list of a cluster's
 * replicas: open-clickhouse-url.ts), creates the database when it is missing and applies the
 * numbered migrations of `migrationsDir` not applied yet.
 */
export async function openClickHouse(url: string, migrationsDir: string, opts: ClickHouseOptions = {}): Promise<ClickHouse> {
  const { bases, database } = parseClickHouseUrls(url)
  const cluster = opts.cluster || null
  const common = {
    request_timeout: opts.requestTimeoutMs ?? 300_000,
    max_open_connections: opts.maxConnections ?? 10,
    // 18.16 knows none of the client's newer defaults; nothing opt-in is sent (see docs/clickhouse.md).
    compression: { request: false, response: false },
    // Failures reach the caller as errors (logged by Tally where handled), not as the client's own lines.
    log: { level: ClickHouseLogLevel.OFF },
  }
  const admin = clickHouseReplicas(bases.map((base) => createClient({ url: base, database: 'default', ...common })))
  try {
    await admin.run((c) => c.command({ query: createDatabaseStatement(database, cluster) }))
  } catch (err) {
    if (!ddlAlreadyDone(err)) throw markClickHouseTransience(err)
  } finally {
    await admin.close()
  }
  const replicas = clickHouseReplicas(bases.map((base) => createClient({ url: base, database, ...common })))
  const ch = wrap(replicas, database)
  try {
    await runClickHouseMigrations(ch, migrationsDir, cluster)
  } catch (err) {
    await replicas.close()
    throw err
  }
  return ch
}

export { identifier, splitUrl } from './open-clickhouse-url.ts'

function wrap(replicas: ClickHouseReplicas, database: string): ClickHouse {
  /** `op` on a live replica (failover: open-clickhouse-replicas.ts), its failure marked transient or not. */
  const guard = async <T>(op: (client: ClickHouseClient) => Promise<T>, signal?: AbortSignal): Promise<T> => {
    try {
      return await replicas.run(op, signal)
    } catch (err) {
      throw markClickHouseTransience(err)
    }
  }
  const select = (client: ClickHouseClient, sql: string, o: QueryOptions) =>
    client.query({ query: sql, format: 'JSON', clickhouse_settings: o.settings, query_id: o.queryId, abort_signal: o.signal })
  /** Mutations of `table` not done yet on `client`'s replica (0 for a replica of several that cannot be reached). */
  const pendingMutations = async (client: ClickHouseClient, table: string): Promise<number> => {
    try {
      const rs = await select(client, `SELECT count() AS n FROM system.mutations WHERE database = ${stringLiteral(database)} AND table = ${stringLiteral(table)} AND is_done = 0`, {})
      return Number((await rs.json<{ n: string }>()).data[0]?.n ?? 0)
    } catch (err) {
      // A replica that is down applies the mutation from ZooKeeper's log when it is back.
      if (replicas.clients.length > 1 && replicaUnavailable(err)) return 0
      throw markClickHouseTransience(err)
    }
  }
  const ch: ClickHouse = {
    database,
    query: <R>(sql: string, o: QueryOptions = {}) => guard(async (client) => (await (await select(client, sql, o)).json<R>()).data, o.signal),
    queryWithMeta: (sql, o = {}) =>
      guard(async (client) => {
        const r = await (await select(client, sql, o)).json<Record<string, unknown>>()
        return { meta: r.meta ?? [], data: r.data }
      }, o.signal),
    async *stream<R>(sql: string, o: QueryOptions & { queryId: string }): AsyncIterable<R[]> {
      const abort = new AbortController()
      const stop = () => abort.abort(o.signal?.reason)
      o.signal?.addEventListener('abort', stop, { once: true })
      let done = false
      try {
        const rs = await guard(
          (client) => client.query({ query: sql, format: 'JSONEachRow', clickhouse_settings: o.settings, query_id: o.queryId, abort_signal: abort.signal }),
          abort.signal,
        )
        for await (const rows of rs.stream<R>()) {
          o.signal?.throwIfAborted()
          yield rows.map((r) => r.json())
        }
        done = true
      } finally {
        o.signal?.removeEventListener('abort', stop)
        if (!done) {
          // Closing the connection alone stops the query only when it next writes a block, which a
          // sort may not do for a long time: the server is told to stop now.
          abort.abort()
          await ch.kill(o.queryId).catch(() => {})
        }
      }
    },
    exec: (sql, o = {}) =>
      guard(async (client) => {
        await client.command({ query: sql, clickhouse_settings: o.settings, query_id: o.queryId, abort_signal: o.signal })
      }, o.signal),
    insert: (table, rows) =>
      guard(async (client) => {
        if (rows.length === 0) return
        await client.insert({ table, values: rows as Record<string, unknown>[], format: 'JSONEachRow' })
      }),
    insertJsonLines: (table, text) =>
      guard(async (client) => {
        if (text.length === 0) return
        // A stream of its own per try: a failed try on one replica is sent whole to the next.
        const r = await client.exec({ query: `INSERT INTO ${table} FORMAT JSONEachRow`, values: Readable.from([text]) })
        // The server answers once the insert is done; its (empty) answer is not read.
        r.stream.destroy()
      }),
    // On a cluster: until every replica that answers has applied them (a GDPR delete is gone from all).

    async awaitMutations(table, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const pending = await Promise.all(replicas.clients.map((client) => pendingMutations(client, table)))
        if (pending.every((n) => n === 0)) return
        if (Date.now() > deadline) throw Object.assign(new Error(`ClickHouse mutation on ${table} not done after ${timeoutMs} ms`), { transient: true })
        await new Promise((r) => setTimeout(r, 20))
      }
    },
    // Sent to every replica of several: the query runs on the one that answered when it started.
    async kill(queryId) {
      const kill = (client: ClickHouseClient) => client.command({ query: `KILL QUERY WHERE query_id = ${stringLiteral(queryId)} ASYNC` })
      if (replicas.clients.length === 1) return guard(async (client) => void (await kill(client)))
      await Promise.all(replicas.clients.map((client) => kill(client).catch(() => undefined)))
    },
    async ping() {
      // client.ping() resolves { success: false } instead of throwing: a query says more.
      await ch.query('SELECT 1')
    },
    close: () => replicas.close(),
  }
  return ch
}

/**
 * Applies the numbered `.sql` files of `dir` not recorded in `_migrations`, in order, statement by
 * statement (ClickHouse has no transactions: every statement is written to be safe to run again,
 * `IF NOT EXISTS`; a column another process added meanwhile counts as added, so processes may start
 * together), and refuses to start when an applied file changed (forward-only). With `cluster`, each
 * statement runs in its replicated form ON CLUSTER (open-clickhouse-cluster.ts), `_migrations` too.
 */
export async function runClickHouseMigrations(ch: ClickHouse, dir: string, cluster: string | null = null): Promise<string[]> {
  const run = async (statement: string) => {
    try {
      await ch.exec(cluster ? clusterStatement(statement, ch.database, cluster) : statement)
    } catch (err) {
      if (!ddlAlreadyDone(err)) throw err
    }
  }
  await run(`CREATE TABLE IF NOT EXISTS _migrations (name String, checksum String, applied_at DateTime('UTC') DEFAULT now())
    ENGINE = MergeTree ORDER BY name`)
  const applied = new Map((await ch.query<{ name: string; checksum: string }>('SELECT name, checksum FROM _migrations')).map((r) => [r.name, r.checksum]))
  const files = (await readdir(dir)).filter((f) => /^\d+.*\.sql$/.test(f)).sort()
  const ran: string[] = []
  for (const file of files) {
    const sql = await readFile(path.join(dir, file), 'utf8')
    const checksum = createHash('sha256').update(sql).digest('hex')
    const seen = applied.get(file)
    if (seen !== undefined) {
      if (seen !== checksum) throw new Error(`migration ${file} changed after it was applied; migrations are forward-only`)
      continue
    }
    for (const statement of statements(sql)) await run(statement)
    await ch.insert('_migrations', [{ name: file, checksum }])
    ran.push(file)
  }
  return ran
}

/** The statements of a migration file: split at a `;` ending a line, `--` comment lines dropped. */
function statements(sql: string): string[] {
  const body = sql
    .split('\n')
    .filter((l) => !/^\s*--/.test(l))
    .join('\n')
  return body
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
}
