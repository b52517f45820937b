/**
 * TALLY_CLICKHOUSE_URL: one URL (`http://user:password@host:8123/database`, or a load balancer in
 * front of the replicas), or a comma list of the replicas' URLs, all naming the same database.
 */
export interface ClickHouseTarget {
  /** The servers' URLs without the database path, in the order given (the first is tried first). */
  bases: string[]
  database: string
}

/** The servers and the database of a TALLY_CLICKHOUSE_URL; throws when the URLs name different databases. */
export function parseClickHouseUrls(urls: string): ClickHouseTarget {
  const parts = urls
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '')
    .map(splitUrl)
  if (parts.length === 0) throw new Error('TALLY_CLICKHOUSE_URL names no server')
  const databases = new Set(parts.map((p) => p.database))
  if (databases.size > 1) throw new Error(`TALLY_CLICKHOUSE_URL: the replicas' URLs name different databases (${[...databases].join(', ')})`)
  return { bases: parts.map((p) => p.base), database: parts[0]!.database }
}

/** The URL without its path (the database), and the database (`default` when none is given). */
export function splitUrl(url: string): { base: string; database: string } {
  const u = new URL(url)
  const database = decodeURIComponent(u.pathname.replace(/^\/+|\/+$/g, '')) || 'default'
  u.pathname = '/'
  return { base: u.toString().replace(/\/$/, ''), database }
}

/** A database or table name, back-quoted (ClickHouse escapes a back quote with a backslash). */
export function identifier(name: string): string {
  return '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`'
}
