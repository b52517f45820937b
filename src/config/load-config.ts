import path from 'node:path'

/** Tally's whole configuration: read once from flags and environment, validated, frozen. */
export interface Config {
  readonly http: { readonly host: string; readonly port: number; readonly maxBodyBytes: number }
  /** `metadataUrl`: a PostgreSQL URL puts the MetaStore on that server instead of embedded PGlite. */
  readonly storage: { readonly dataDir: string; readonly metadataUrl: string | null }
  readonly bootstrap: { readonly projectApiKey: string | null; readonly personalApiKey: string | null }
  readonly ingestion: { readonly flushIntervalMs: number; readonly maxBatchEvents: number }
  /**
   * `personCacheEntries`: size of the LRU of person/group properties that /decide reads;
   * `warmPersonCache`: fill it with the most recent persons in the background at start-up.
   */
  readonly flags: { readonly personCacheEntries: number; readonly warmPersonCache: boolean }
  /**
   * `format`: `json` lines, or `pretty` readable lines (null: pretty when stdout is a terminal);
   * `publicSuccessLevel`: the level of successful requests on the public high-volume routes
   * (capture, decide); their errors are always logged, private-API requests always at info.
   */
  readonly log: { readonly level: string; readonly format: 'json' | 'pretty' | null; readonly publicSuccessLevel: string }
}

/** Flag values given on the command line; each wins over its environment variable. */
export interface ConfigFlags {
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
  const config: Config = {
    http: {
      host: flags.host ?? env.TALLY_HOST ?? '127.0.0.1',
      port: int('port (--port/TALLY_PORT)', flags.port ?? env.TALLY_PORT, 8000, 0, 65535),
      maxBodyBytes: int('TALLY_MAX_BODY_BYTES', env.TALLY_MAX_BODY_BYTES, 20 * 1024 * 1024, 1024),
    },
    storage: {
      dataDir: path.resolve(flags.dataDir ?? env.TALLY_DATA_DIR ?? './.tally'),
      metadataUrl: env.TALLY_DATABASE_URL || null,
    },
    bootstrap: {
      projectApiKey: env.TALLY_PROJECT_API_KEY || null,
      personalApiKey: env.TALLY_PERSONAL_API_KEY || null,
    },
    ingestion: {
      flushIntervalMs: int('TALLY_FLUSH_INTERVAL_MS', env.TALLY_FLUSH_INTERVAL_MS, 5, 0, 10_000),
      maxBatchEvents: int('TALLY_MAX_BATCH_EVENTS', env.TALLY_MAX_BATCH_EVENTS, 10_000, 1),
    },
    flags: {
      personCacheEntries: int('TALLY_PERSON_CACHE_SIZE', env.TALLY_PERSON_CACHE_SIZE, 200_000, 0),
      warmPersonCache: bool('TALLY_PERSON_CACHE_WARM', env.TALLY_PERSON_CACHE_WARM, true),
    },
    log: {
      level: env.TALLY_LOG_LEVEL ?? 'info',
      format: env.TALLY_LOG_FORMAT === 'json' || env.TALLY_LOG_FORMAT === 'pretty' ? env.TALLY_LOG_FORMAT : null,
      publicSuccessLevel: env.TALLY_LOG_PUBLIC_SUCCESS_LEVEL ?? 'debug',
    },
  }
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
  if (!levels.includes(config.log.level)) problems.push(`TALLY_LOG_LEVEL must be one of ${levels.join(', ')}`)
  if (!levels.includes(config.log.publicSuccessLevel)) problems.push(`TALLY_LOG_PUBLIC_SUCCESS_LEVEL must be one of ${levels.join(', ')}`)
  if (env.TALLY_LOG_FORMAT && config.log.format === null) problems.push('TALLY_LOG_FORMAT must be json or pretty')
  if (config.bootstrap.projectApiKey && !config.bootstrap.projectApiKey.startsWith('phc_')) {
    problems.push('TALLY_PROJECT_API_KEY must start with phc_')
  }
  if (config.bootstrap.personalApiKey && !config.bootstrap.personalApiKey.startsWith('phx_')) {
    problems.push('TALLY_PERSONAL_API_KEY must start with phx_')
  }
  if (config.storage.metadataUrl && !/^postgres(ql)?:\/\//.test(config.storage.metadataUrl)) {
    problems.push('TALLY_DATABASE_URL must be a postgres:// URL')
  }
  if (problems.length) throw new Error(`Invalid configuration:\n- ${problems.join('\n- ')}`)
  return deepFreeze(config)
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v)
    Object.freeze(o)
  }
  return o
}
