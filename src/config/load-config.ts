import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import path from 'node:path'
import { parseCrashAt } from '../shared/crash-points.ts'

/** Tally's whole configuration: read once from flags and environment, validated, frozen. */
export interface Config {
  /** What this process does (`tally serve --role`, TALLY_ROLE): every role unless split over processes. */
  readonly roles: ReadonlySet<Role>
  readonly http: HttpConfig
  /** `metadataUrl`: a PostgreSQL URL puts the MetaStore on that server instead of embedded PGlite. */
  readonly storage: {
    readonly dataDir: string
    readonly metadataUrl: string | null
    /**
     * `TALLY_CLICKHOUSE_URL` (`http://user:password@host:8123/database`): events, dead letters, person
     * overrides and event queries on that ClickHouse server (the database is created when missing)
     * instead of embedded DuckDB. Metadata stays where `metadataUrl` puts it. A comma list names the
     * replicas of a cluster, all with the same database: requests go to one that answers.
     */
    readonly clickhouseUrl: string | null
    /**
     * `TALLY_CLICKHOUSE_CLUSTER`: the cluster (the servers' `remote_servers`) whose replicas hold the
     * tables: Replicated*MergeTree, migrations ON CLUSTER (docs/clickhouse.md, "Replicas"). Null: one server.
     */
    readonly clickhouseCluster: string | null
    readonly queueSegmentBytes: number
    /** Unprocessed bytes the event queue may hold; past it capture answers 503 with Retry-After. */
    readonly queueMaxBacklogBytes: number
    /** DuckDB's memory limit: cached table blocks are evicted and large queries spill to disk past it. */
    readonly duckdbMemoryLimit: string
    /**
     * `TALLY_CLICKHOUSE_QUERY_MEMORY_LIMIT` (e.g. 2GB): ClickHouse's `max_memory_usage` for each query
     * statement; a query past it is a 400 naming the limit. Null: the server's own (10 GB by default).
     */
    readonly clickhouseQueryMemoryLimit: string | null
    /** DuckDB's memory limit while no query has run for a while (only ingestion writes); see open-duckdb.ts. */
    readonly duckdbWriteMemoryLimit: string
    /** DuckDB's threads while no query has run for a while (only ingestion writes); see open-duckdb.ts. */
    readonly duckdbWriteThreads: number
    /** Seconds without a DuckDB statement after which its cached blocks are dropped (0: never). */
    readonly duckdbIdleTrimSeconds: number
    /** An event whose uuid is among this many (to twice as many) of the latest stored is not stored again. */
    readonly dedupWindowEvents: number
    /** Without `metadataUrl`: embedded PostgreSQL's `shared_buffers` (its page cache inside Tally's memory). */
    readonly pgliteSharedBuffers: string
    /** With `metadataUrl`: the longest a statement may run on the server before it is cancelled (a 503). */
    readonly statementTimeoutMs: number
    /** The event queue on NATS JetStream instead of the embedded segment log (null: embedded). */
    readonly nats: NatsConfig | null
  }
  readonly bootstrap: { readonly projectApiKey: string | null; readonly personalApiKey: string | null }
  /**
   * `retryMinMs`/`retryMaxMs`: backoff of a batch the worker could not store (doubling, capped);
   * `isolateAfterAttempts`: deliveries a batch may fail with an unclassified error before it is split
   * to dead-letter the events at fault (store and disk failures are retried whole, without limit).
   */
  readonly ingestion: {
    /**
     * The linger: a micro-batch goes to the pipeline once it holds `maxBatchEvents` or its first event
     * has waited this long. Every micro-batch costs a few ms of CPU whatever its size (the persons
     * step's statements, DuckDB's insert), so at low rates the batch count sets the CPU.
     */
    readonly flushIntervalMs: number
    readonly maxBatchEvents: number
    readonly retryMinMs: number
    readonly retryMaxMs: number
    readonly isolateAfterAttempts: number
  }
  /**
   * `personCacheEntries`: size of the LRU of person/group properties that /decide reads;
   * `warmPersonCache`: fill it with the most recent persons in the background at start-up.
   */
  readonly flags: { readonly personCacheEntries: number; readonly warmPersonCache: boolean }
  /**
   * Work one capture request may ask for: events per request, property keys (with `$set`/`$set_once`)
   * and elements per event; past one, the request is a 413 naming it (domain/events/capture-limits.ts).
   */
  readonly capture: { readonly maxEvents: number; readonly maxKeysPerEvent: number; readonly maxElementsPerEvent: number }
  /**
   * Query API guards: queries computing at once in the process, per project and per user (429 past
   * them), queries a user may start per minute on the query API (0: no limit), time limit per
   * statement, rows per statement; `threads`: DuckDB scheduler threads that alone compute queries,
   * the cores all queries together may take.
   */
  readonly query: {
    readonly concurrency: number
    readonly perProject: number
    readonly perUser: number
    readonly ratePerUser: number
    readonly timeoutMs: number
    readonly maxRows: number
    readonly threads: number
    /** Nice value of DuckDB's threads (0: as the process): queries yield the cores to capture and flags. */
    readonly nice: number
  }
  /**
   * Sign-in: failed attempts allowed per client address and per e-mail within the window before 429;
   * how long an unused session lives (each use pushes its end back).
   */
  readonly auth: { readonly loginMaxFailures: number; readonly loginWindowMs: number; readonly sessionTtlMs: number }
  /**
   * `format`: `json` lines, or `pretty` readable lines (null: pretty when stdout is a terminal);
   * `publicSuccessLevel`: the level of successful requests on the public high-volume routes
   * (capture, decide); their errors are always logged, private-API requests always at info.
   */
  readonly log: { readonly level: string; readonly format: 'json' | 'pretty' | null; readonly publicSuccessLevel: string }
  /**
   * Outgoing webhooks (actions that notify, destinations): `siteUrl` is Tally's public address for the
   * links in messages; `allow` the IPs/CIDRs that may be reached although internal; the rest bound the
   * outbox sender (tries, pauses, per-channel concurrency and rate, pending messages kept per channel).
   */
  /** `checkMs`: how often the retention job looks at the projects' `event_retention_days`. */
  readonly retention: { readonly checkMs: number }
  /**
   * `compactCheckMs`: how often the worker merges the sessions aggregate's partials (DuckDB; 0: never).
   * Between passes a live session gains one partial per micro-batch that holds its events.
   */
  readonly sessions: { readonly compactCheckMs: number }
  /**
   * GeoIP at ingestion and in /decide (`TALLY_GEOIP`, on by default; each project can turn it off too):
   * `databasePath` an MMDB City file to use instead of the bundled DB-IP Lite data (`TALLY_GEOIP_DB`).
   */
  readonly geoip: { readonly enabled: boolean; readonly databasePath: string | null }
  readonly webhooks: {
    readonly siteUrl: string | null
    readonly allow: readonly string[]
    readonly timeoutMs: number
    readonly maxAttempts: number
    readonly retryMinMs: number
    readonly retryMaxMs: number
    readonly concurrency: number
    readonly ratePerSecond: number
    readonly backlogLimit: number
    /**
     * How long a claimed message stays leased to one sender before another (or this one after a
     * restart) may send it: longer than a claimed batch can take to send (default 4 × timeout + 60 s).
     */
    readonly leaseMs: number
    /** Settled messages (sent, failed, dropped) are deleted this long after they were queued. */
    readonly keepSettledMs: number
  }
  /**
   * Test-only switches for the kill -9 matrix: `crashAt` SIGKILLs the process at a named crash
   * point (`TALLY_CRASH_AT=<point>[:<nth>]`, see src/shared/crash-points.ts);
   * `unsafeAckBeforeFsync` is the deliberately broken queue the matrix must catch.
   */
  readonly testing: { readonly crashAt: string | null; readonly unsafeAckBeforeFsync: boolean }
  /**
   * Session replay (`/s/`): the largest body accepted (PostHog: 25 MiB), the bytes of bodies read
   * and decoded at once (further requests wait, unread, in their sockets), and how often recordings
   * past their project's retention are deleted.
   */
  readonly replay: {
    readonly maxBodyBytes: number
    readonly memoryBudgetBytes: number
    readonly retentionCheckMs: number
    /** Where recording bytes live: session files in the data dir, or rows of the metadata database (shared by every process). */
    readonly store: 'files' | 'database'
  }
}

/** The HTTP server's address, body bound, timeouts and connection limits. */
export interface HttpConfig {
  readonly host: string
  readonly port: number
  readonly maxBodyBytes: number
  /** Whole request (headers and body) must arrive within this (Node `server.requestTimeout`); 0: none. */
  readonly requestTimeoutMs: number
  /** The headers must arrive within this (Node `server.headersTimeout`). */
  readonly headersTimeoutMs: number
  /** An idle keep-alive connection is closed after this (Node `server.keepAliveTimeout`). */
  readonly keepAliveTimeoutMs: number
  /** A socket with no traffic either way for this long is closed (Fastify `connectionTimeout`); 0: none. */
  readonly idleTimeoutMs: number
  /** Requests served on one keep-alive connection before it is closed (0: no limit). */
  readonly maxRequestsPerSocket: number
  /** Open connections one remote address may hold; beyond it a new one is closed at once (0: no cap). */
  readonly maxConnectionsPerIp: number
  /** Addresses/CIDRs whose `X-Forwarded-*` headers are believed (empty: nobody's). */
  readonly trustedProxies: readonly string[]
  /** A request body slower than this (bytes/s, averaged over `minReceiveWindowMs`) is cut with a 408 (0: no minimum). */
  readonly minReceiveBytesPerSecond: number
  readonly minReceiveWindowMs: number
  /** Threads that decode capture bodies of `captureDecodeMinBytes` or more off the event loop (0: none). */
  readonly captureDecodeThreads: number
  readonly captureDecodeMinBytes: number
}

/** `TALLY_NATS_*`: where the JetStream event queue lives and how its stream and consumer are made. */
export interface NatsConfig {
  readonly servers: readonly string[]
  readonly stream: string
  readonly consumer: string
  /** Stream replicas when Tally creates the stream (an existing stream keeps its own). */
  readonly replicas: number
  /** Unacknowledged messages are delivered again after this (doubling on each redelivery). */
  readonly ackWaitMs: number
  /** A publish JetStream has not acknowledged within this fails (capture answers 503). */
  readonly publishTimeoutMs: number
}

/**
 * A process role: `capture` serves the public ingestion routes, /decide, /flags, remote config and
 * the SDK assets; `api` the private API, the query API and the web app; `worker` runs the ingestion
 * pipeline. `all` (the default) is all three.
 */
export type Role = 'capture' | 'api' | 'worker'
export const ROLES: readonly Role[] = ['capture', 'api', 'worker']

/** Flag values given on the command line; each wins over its environment variable. */
export interface ConfigFlags {
  /** `tally serve --role` (comma list). */
  role?: string
  port?: string
  host?: string
  dataDir?: string
}

/**
 * Builds the configuration from command-line flags and an environment map. Reports every problem at
 * once in one thrown Error. The only reader of `process.env` in Tally is the CLI passing it here.
 */
export function loadConfig(flags: ConfigFlags, env: Record<string, string | undefined>): Config {
  const problems: string[] = []
  const int = (name: string, raw: string | undefined, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) => {
    if (raw === undefined || raw === '') return fallback
    const n = Number(raw)
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer between ${min} and ${max}, got "${raw}"`)
      return fallback
    }
    return n
  }
  const bool = (name: string, raw: string | undefined, fallback: boolean) => {
    if (raw === undefined || raw === '') return fallback
    if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true
    if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false
    problems.push(`${name} must be true or false, got "${raw}"`)
    return fallback
  }
  const roleText = (flags.role ?? env.TALLY_ROLE ?? 'all').trim()
  const roles = new Set<Role>()
  for (const r of roleText.split(',').map((x) => x.trim())) {
    if (r === 'all') ROLES.forEach((x) => roles.add(x))
    else if ((ROLES as readonly string[]).includes(r)) roles.add(r as Role)
    else problems.push(`--role/TALLY_ROLE: "${r}" is not a role (all, capture, api, worker, or a comma list of them)`)
  }
  if (roles.size === 0) ROLES.forEach((x) => roles.add(x))
  const config: Config = {
    roles,
    http: {
      host: flags.host ?? env.TALLY_HOST ?? '127.0.0.1',
      port: int('port (--port/TALLY_PORT)', flags.port ?? env.TALLY_PORT, 8000, 0, 65535),
      maxBodyBytes: int('TALLY_MAX_BODY_BYTES', env.TALLY_MAX_BODY_BYTES, 20 * 1024 * 1024, 1024),
      // 300 s: a 20 MB batch still fits at ~0.6 Mbit/s; a trickled body is cut off at that point.
      requestTimeoutMs: int('TALLY_REQUEST_TIMEOUT_MS', env.TALLY_REQUEST_TIMEOUT_MS, 300_000, 0, 3_600_000),
      headersTimeoutMs: int('TALLY_HEADERS_TIMEOUT_MS', env.TALLY_HEADERS_TIMEOUT_MS, 20_000, 100, 600_000),
      // Longer than the 60 s idle timeout of common load balancers, so they close first.
      keepAliveTimeoutMs: int('TALLY_KEEP_ALIVE_TIMEOUT_MS', env.TALLY_KEEP_ALIVE_TIMEOUT_MS, 72_000, 100, 3_600_000),
      idleTimeoutMs: int('TALLY_IDLE_TIMEOUT_MS', env.TALLY_IDLE_TIMEOUT_MS, 60_000, 0, 3_600_000),
      maxRequestsPerSocket: int('TALLY_MAX_REQUESTS_PER_SOCKET', env.TALLY_MAX_REQUESTS_PER_SOCKET, 10_000, 0),
      maxConnectionsPerIp: int('TALLY_MAX_CONNECTIONS_PER_IP', env.TALLY_MAX_CONNECTIONS_PER_IP, 256, 0),
      // Under 1 KB/s for a whole 30 s window: a trickle is cut within a minute; a slow link that keeps up passes.
      minReceiveBytesPerSecond: int('TALLY_MIN_RECEIVE_BYTES_PER_SECOND', env.TALLY_MIN_RECEIVE_BYTES_PER_SECOND, 1024, 0, 1024 ** 3),
      minReceiveWindowMs: int('TALLY_MIN_RECEIVE_WINDOW_MS', env.TALLY_MIN_RECEIVE_WINDOW_MS, 30_000, 100, 3_600_000),
      trustedProxies: (env.TALLY_TRUSTED_PROXIES ?? '').split(',').map((x) => x.trim()).filter((x) => x !== ''),
      // One per core beyond the event loop's (at most 4); bodies under 4 KiB are cheaper decoded inline.
      captureDecodeThreads: int('TALLY_CAPTURE_DECODE_THREADS', env.TALLY_CAPTURE_DECODE_THREADS, Math.min(4, availableParallelism() - 1), 0, 64),
      captureDecodeMinBytes: int('TALLY_CAPTURE_DECODE_MIN_BYTES', env.TALLY_CAPTURE_DECODE_MIN_BYTES, 4096, 0),
    },
    storage: {
      dataDir: path.resolve(flags.dataDir ?? env.TALLY_DATA_DIR ?? './.tally'),
      metadataUrl: env.TALLY_DATABASE_URL || null,
      clickhouseUrl: env.TALLY_CLICKHOUSE_URL || null,
      clickhouseCluster: env.TALLY_CLICKHOUSE_CLUSTER || null,
      // The event queue starts a new segment file past this size (fully acknowledged ones are deleted).
      queueSegmentBytes: int('TALLY_QUEUE_SEGMENT_BYTES', env.TALLY_QUEUE_SEGMENT_BYTES, 64 * 1024 * 1024, 1024),
      // Accepted but not yet processed: past it capture answers 503 + Retry-After (the SDKs retry).
      queueMaxBacklogBytes: int('TALLY_QUEUE_MAX_BACKLOG_BYTES', env.TALLY_QUEUE_MAX_BACKLOG_BYTES, 2 * 1024 ** 3, 1024),
      pgliteSharedBuffers: env.TALLY_PGLITE_SHARED_BUFFERS || '32MB',
      duckdbMemoryLimit: env.TALLY_DUCKDB_MEMORY_LIMIT || '512MB',
      clickhouseQueryMemoryLimit: env.TALLY_CLICKHOUSE_QUERY_MEMORY_LIMIT || null,
      duckdbWriteMemoryLimit: env.TALLY_DUCKDB_WRITE_MEMORY_LIMIT || '128MB',
      // A micro-batch's insert costs ~20 % less CPU on one thread than on two (open-duckdb.ts).
      duckdbWriteThreads: int('TALLY_DUCKDB_WRITE_THREADS', env.TALLY_DUCKDB_WRITE_THREADS, 1, 1, 1024),
      duckdbIdleTrimSeconds: int('TALLY_DUCKDB_IDLE_TRIM_SECONDS', env.TALLY_DUCKDB_IDLE_TRIM_SECONDS, 30, 0, 86_400),
      // 16.8 MB of filter per million; at most 20M (~540 MB).
      dedupWindowEvents: int('TALLY_DEDUP_WINDOW_EVENTS', env.TALLY_DEDUP_WINDOW_EVENTS, 1_000_000, 1, 20_000_000),
      statementTimeoutMs: int('TALLY_DATABASE_STATEMENT_TIMEOUT_MS', env.TALLY_DATABASE_STATEMENT_TIMEOUT_MS, 30_000, 100, 3_600_000),
      nats: env.TALLY_NATS_URL
        ? {
            servers: env.TALLY_NATS_URL.split(',').map((x) => x.trim()).filter((x) => x !== ''),
            stream: env.TALLY_NATS_STREAM || 'TALLY_EVENTS',
            consumer: env.TALLY_NATS_CONSUMER || 'tally-worker',
            replicas: int('TALLY_NATS_REPLICAS', env.TALLY_NATS_REPLICAS, 1, 1, 5),
            ackWaitMs: int('TALLY_NATS_ACK_WAIT_MS', env.TALLY_NATS_ACK_WAIT_MS, 30_000, 1000, 3_600_000),
            publishTimeoutMs: int('TALLY_NATS_PUBLISH_TIMEOUT_MS', env.TALLY_NATS_PUBLISH_TIMEOUT_MS, 5000, 100, 600_000),
          }
        : null,
    },
    bootstrap: {
      projectApiKey: env.TALLY_PROJECT_API_KEY || null,
      personalApiKey: env.TALLY_PERSONAL_API_KEY || null,
    },
    ingestion: {
      flushIntervalMs: int('TALLY_FLUSH_INTERVAL_MS', env.TALLY_FLUSH_INTERVAL_MS, 250, 0, 10_000),
      maxBatchEvents: int('TALLY_MAX_BATCH_EVENTS', env.TALLY_MAX_BATCH_EVENTS, 10_000, 1),
      retryMinMs: int('TALLY_INGEST_RETRY_MIN_MS', env.TALLY_INGEST_RETRY_MIN_MS, 250, 1, 600_000),
      retryMaxMs: int('TALLY_INGEST_RETRY_MAX_MS', env.TALLY_INGEST_RETRY_MAX_MS, 30_000, 1, 3_600_000),
      isolateAfterAttempts: int('TALLY_INGEST_ISOLATE_AFTER', env.TALLY_INGEST_ISOLATE_AFTER, 3, 1, 1000),
    },
    capture: {
      maxEvents: int('TALLY_CAPTURE_MAX_EVENTS', env.TALLY_CAPTURE_MAX_EVENTS, 2_000, 1, 1_000_000),
      maxKeysPerEvent: int('TALLY_CAPTURE_MAX_EVENT_KEYS', env.TALLY_CAPTURE_MAX_EVENT_KEYS, 1_000, 1, 1_000_000),
      maxElementsPerEvent: int('TALLY_CAPTURE_MAX_EVENT_ELEMENTS', env.TALLY_CAPTURE_MAX_EVENT_ELEMENTS, 500, 1, 1_000_000),
    },
    query: {
      concurrency: int('TALLY_QUERY_CONCURRENCY', env.TALLY_QUERY_CONCURRENCY, 4, 1, 256),
      perProject: int('TALLY_QUERY_CONCURRENCY_PER_PROJECT', env.TALLY_QUERY_CONCURRENCY_PER_PROJECT, 3, 1, 256),
      perUser: int('TALLY_QUERY_CONCURRENCY_PER_USER', env.TALLY_QUERY_CONCURRENCY_PER_USER, 2, 1, 256),
      ratePerUser: int('TALLY_QUERY_RATE_PER_USER', env.TALLY_QUERY_RATE_PER_USER, 240, 0, 1_000_000),
      timeoutMs: int('TALLY_QUERY_TIMEOUT_MS', env.TALLY_QUERY_TIMEOUT_MS, 30_000, 1, 3_600_000),
      maxRows: int('TALLY_QUERY_MAX_ROWS', env.TALLY_QUERY_MAX_ROWS, 500_000, 1),
      threads: int('TALLY_QUERY_THREADS', env.TALLY_QUERY_THREADS, Math.max(1, availableParallelism() - 1), 1, 256),
      nice: int('TALLY_QUERY_NICE', env.TALLY_QUERY_NICE, 10, 0, 19),
    },
    flags: {
      personCacheEntries: int('TALLY_PERSON_CACHE_SIZE', env.TALLY_PERSON_CACHE_SIZE, 200_000, 0),
      warmPersonCache: bool('TALLY_PERSON_CACHE_WARM', env.TALLY_PERSON_CACHE_WARM, true),
    },
    auth: {
      loginMaxFailures: int('TALLY_LOGIN_MAX_FAILURES', env.TALLY_LOGIN_MAX_FAILURES, 5, 1, 1_000_000),
      loginWindowMs: 1000 * int('TALLY_LOGIN_WINDOW_SECONDS', env.TALLY_LOGIN_WINDOW_SECONDS, 900, 1, 86_400),
      sessionTtlMs: 3_600_000 * int('TALLY_SESSION_TTL_HOURS', env.TALLY_SESSION_TTL_HOURS, 14 * 24, 1, 24 * 365),
    },
    log: {
      level: env.TALLY_LOG_LEVEL ?? 'info',
      format: env.TALLY_LOG_FORMAT === 'json' || env.TALLY_LOG_FORMAT === 'pretty' ? env.TALLY_LOG_FORMAT : null,
      publicSuccessLevel: env.TALLY_LOG_PUBLIC_SUCCESS_LEVEL ?? 'debug',
    },
    replay: {
      maxBodyBytes: int('TALLY_REPLAY_MAX_BODY_BYTES', env.TALLY_REPLAY_MAX_BODY_BYTES, 25 * 1024 * 1024, 1024),
      memoryBudgetBytes: int('TALLY_REPLAY_MEMORY_BUDGET_BYTES', env.TALLY_REPLAY_MEMORY_BUDGET_BYTES, 64 * 1024 * 1024, 1024),
      retentionCheckMs: int('TALLY_REPLAY_RETENTION_CHECK_MS', env.TALLY_REPLAY_RETENTION_CHECK_MS, 3_600_000, 1000),
      // On PostgreSQL several processes (hosts) serve one project: the bytes go where all of them read.
      store: env.TALLY_REPLAY_STORE === 'files' || env.TALLY_REPLAY_STORE === 'database' ? env.TALLY_REPLAY_STORE : env.TALLY_DATABASE_URL ? 'database' : 'files',
    },
    geoip: {
      enabled: bool('TALLY_GEOIP', env.TALLY_GEOIP, true),
      databasePath: env.TALLY_GEOIP_DB ? path.resolve(env.TALLY_GEOIP_DB) : null,
    },
    retention: {
      checkMs: int('TALLY_RETENTION_CHECK_MS', env.TALLY_RETENTION_CHECK_MS, 60_000, 100, 3_600_000),
    },
    sessions: {
      compactCheckMs: int('TALLY_SESSIONS_COMPACT_CHECK_MS', env.TALLY_SESSIONS_COMPACT_CHECK_MS, 60_000, 0, 3_600_000),
    },
    webhooks: {
      siteUrl: env.TALLY_SITE_URL ? env.TALLY_SITE_URL.replace(/\/+$/, '') : null,
      allow: (env.TALLY_WEBHOOK_ALLOW ?? '').split(',').map((x) => x.trim()).filter((x) => x !== ''),
      timeoutMs: int('TALLY_WEBHOOK_TIMEOUT_MS', env.TALLY_WEBHOOK_TIMEOUT_MS, 10_000, 100, 600_000),
      maxAttempts: int('TALLY_WEBHOOK_MAX_ATTEMPTS', env.TALLY_WEBHOOK_MAX_ATTEMPTS, 8, 1, 1000),
      retryMinMs: int('TALLY_WEBHOOK_RETRY_MIN_MS', env.TALLY_WEBHOOK_RETRY_MIN_MS, 1000, 1, 3_600_000),
      retryMaxMs: int('TALLY_WEBHOOK_RETRY_MAX_MS', env.TALLY_WEBHOOK_RETRY_MAX_MS, 600_000, 1, 86_400_000),
      concurrency: int('TALLY_WEBHOOK_CONCURRENCY', env.TALLY_WEBHOOK_CONCURRENCY, 4, 1, 256),
      ratePerSecond: int('TALLY_WEBHOOK_RATE_PER_SECOND', env.TALLY_WEBHOOK_RATE_PER_SECOND, 50, 1, 100_000),
      backlogLimit: int('TALLY_WEBHOOK_BACKLOG_LIMIT', env.TALLY_WEBHOOK_BACKLOG_LIMIT, 100_000, 1),
      leaseMs: int('TALLY_WEBHOOK_LEASE_MS', env.TALLY_WEBHOOK_LEASE_MS, int('TALLY_WEBHOOK_TIMEOUT_MS', env.TALLY_WEBHOOK_TIMEOUT_MS, 10_000, 100, 600_000) * 4 + 60_000, 1000, 86_400_000),
      keepSettledMs: int('TALLY_OUTBOX_KEEP_DAYS', env.TALLY_OUTBOX_KEEP_DAYS, 7, 1, 3650) * 86_400_000,
    },
    testing: {
      crashAt: env.TALLY_CRASH_AT || null,
      unsafeAckBeforeFsync: bool('TALLY_UNSAFE_ACK_BEFORE_FSYNC', env.TALLY_UNSAFE_ACK_BEFORE_FSYNC, false),
    },
  }
  for (const p of config.http.trustedProxies) {
    if (!isProxyAddress(p)) problems.push(`TALLY_TRUSTED_PROXIES: "${p}" is not an IP address, a CIDR, or loopback/linklocal/uniquelocal`)
  }
  if (config.http.requestTimeoutMs > 0 && config.http.headersTimeoutMs > config.http.requestTimeoutMs) {
    problems.push('TALLY_HEADERS_TIMEOUT_MS must not be longer than TALLY_REQUEST_TIMEOUT_MS')
  }
  if (config.ingestion.retryMinMs > config.ingestion.retryMaxMs) {
    problems.push('TALLY_INGEST_RETRY_MIN_MS must not be longer than TALLY_INGEST_RETRY_MAX_MS')
  }
  for (const a of config.webhooks.allow) {
    const [ip, bits, ...rest] = a.split('/')
    if (isIP(ip!) === 0 || rest.length > 0 || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= (isIP(ip!) === 4 ? 32 : 128)))) {
      problems.push(`TALLY_WEBHOOK_ALLOW: "${a}" is not an IP address or a CIDR`)
    }
  }
  if (config.webhooks.leaseMs <= config.webhooks.timeoutMs) problems.push('TALLY_WEBHOOK_LEASE_MS must be longer than TALLY_WEBHOOK_TIMEOUT_MS')
  if (config.webhooks.siteUrl && !/^https?:\/\/[^/]+/.test(config.webhooks.siteUrl)) problems.push('TALLY_SITE_URL must be an http(s):// URL')
  if (config.testing.crashAt && !parseCrashAt(config.testing.crashAt)) {
    problems.push(`TALLY_CRASH_AT must be <point>[:<nth>] with a known point, got "${config.testing.crashAt}"`)
  }
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
  if (!levels.includes(config.log.level)) problems.push(`TALLY_LOG_LEVEL must be one of ${levels.join(', ')}`)
  if (!levels.includes(config.log.publicSuccessLevel)) problems.push(`TALLY_LOG_PUBLIC_SUCCESS_LEVEL must be one of ${levels.join(', ')}`)
  if (env.TALLY_LOG_FORMAT && config.log.format === null) problems.push('TALLY_LOG_FORMAT must be json or pretty')
  if (env.TALLY_REPLAY_STORE && env.TALLY_REPLAY_STORE !== config.replay.store) problems.push('TALLY_REPLAY_STORE must be files or database')
  if (config.bootstrap.projectApiKey && !config.bootstrap.projectApiKey.startsWith('phc_')) {
    problems.push('TALLY_PROJECT_API_KEY must start with phc_')
  }
  if (config.bootstrap.personalApiKey && !config.bootstrap.personalApiKey.startsWith('phx_')) {
    problems.push('TALLY_PERSONAL_API_KEY must start with phx_')
  }
  const sizes = [['TALLY_PGLITE_SHARED_BUFFERS', config.storage.pgliteSharedBuffers], ['TALLY_DUCKDB_MEMORY_LIMIT', config.storage.duckdbMemoryLimit], ['TALLY_DUCKDB_WRITE_MEMORY_LIMIT', config.storage.duckdbWriteMemoryLimit], ['TALLY_CLICKHOUSE_QUERY_MEMORY_LIMIT', config.storage.clickhouseQueryMemoryLimit]]
  for (const [name, size] of sizes) {
    if (size !== null && sizeBytes(size!) === null) problems.push(`${name} must be a size such as 512MB (kB, MB or GB), got "${size}"`)
  }
  if (config.storage.clickhouseUrl && !validClickHouseUrls(config.storage.clickhouseUrl)) {
    problems.push('TALLY_CLICKHOUSE_URL must be an http:// or https:// URL naming at most one database, e.g. http://default:@127.0.0.1:8123/tally, or a comma list of such URLs (replicas) naming the same database')
  }
  if (config.storage.clickhouseCluster !== null) {
    if (!config.storage.clickhouseUrl) problems.push('TALLY_CLICKHOUSE_CLUSTER needs TALLY_CLICKHOUSE_URL (the replicas, or a load balancer in front of them)')
    if (!/^[A-Za-z0-9_.-]+$/.test(config.storage.clickhouseCluster)) problems.push(`TALLY_CLICKHOUSE_CLUSTER must be a cluster name of the servers' remote_servers (letters, digits, _ . -), got "${config.storage.clickhouseCluster}"`)
  }
  if (config.storage.metadataUrl && !/^postgres(ql)?:\/\//.test(config.storage.metadataUrl)) {
    problems.push('TALLY_DATABASE_URL must be a postgres:// URL')
  }
  const nats = config.storage.nats
  if (nats) {
    for (const server of nats.servers) {
      if (!/^(nats|tls|wss?):\/\/[^\s/]+\/?$/.test(server)) problems.push(`TALLY_NATS_URL: "${server}" is not a nats:// URL (a comma list for a cluster)`)
    }
    if (nats.servers.length === 0) problems.push('TALLY_NATS_URL must list at least one nats:// URL')
    for (const [name, value] of [['TALLY_NATS_STREAM', nats.stream], ['TALLY_NATS_CONSUMER', nats.consumer]] as const) {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(value)) problems.push(`${name} must be letters, digits, _ or - (at most 64), got "${value}"`)
    }
  }
  if (roles.size < ROLES.length && !problems.some((p) => p.startsWith('--role')) && (!config.storage.metadataUrl || !nats)) {
    problems.push(
      `--role ${roleText}: with embedded stores only --role all can run, because PGlite, DuckDB and the file queue live in one data dir that one process opens. ` +
        `Set TALLY_DATABASE_URL (PostgreSQL) and TALLY_NATS_URL (NATS JetStream) to split capture, api and worker over processes` +
        `${!config.storage.metadataUrl && !nats ? '' : !nats ? ' (TALLY_NATS_URL is missing)' : ' (TALLY_DATABASE_URL is missing)'}.`,
    )
  }
  if (problems.length) throw new Error(`Invalid configuration:\n- ${problems.join('\n- ')}`)
  return deepFreeze(config)
}

/** What proxy-addr (Fastify's `trustProxy`) accepts: an IP, IP/prefix, IP/netmask, or a named range. */
function isProxyAddress(p: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(p)) return true
  const [ip, prefix, ...rest] = p.split('/')
  const family = isIP(ip!)
  if (family === 0 || rest.length > 0) return false
  if (prefix === undefined) return true
  if (/^\d+$/.test(prefix)) return Number(prefix) <= (family === 4 ? 32 : 128)
  return family === 4 && isIP(prefix) === 4
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v)
    Object.freeze(o)
  }
  return o
}

/** http(s) URLs (a comma list) whose paths are empty or one database name, the same in each. */
function validClickHouseUrls(urls: string): boolean {
  const list = urls.split(',').map((u) => u.trim())
  const databases = new Set<string>()
  for (const url of list) {
    try {
      const u = new URL(url)
      if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !/^\/?[^/]*\/?$/.test(u.pathname)) return false
      databases.add(u.pathname.replace(/\//g, '') || 'default')
    } catch {
      return false
    }
  }
  return databases.size === 1
}

/** Bytes of a size setting (`512MB`: kB, MB, GB in powers of 1,000, as DuckDB reads them), or null when it is not one. */
export function sizeBytes(size: string): number | null {
  const m = /^([1-9]\d*)(kB|MB|GB)$/.exec(size)
  return m ? Number(m[1]) * { kB: 1e3, MB: 1e6, GB: 1e9 }[m[2] as 'kB' | 'MB' | 'GB'] : null
}
