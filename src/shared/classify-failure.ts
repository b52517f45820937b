/**
 * Why a step (or the store) failed, as far as the pipeline can tell:
 * - `transient`: the store or the disk could not do it now (no space, I/O error, connection refused
 *   or closed): nothing is wrong with the events; the whole batch is retried later, never
 *   dead-lettered;
 * - `permanent`: the store refused the data itself (a conversion or constraint error): some event
 *   in the batch is poison, so the batch is split to find it;
 * - `unknown`: anything else; retried whole a few times before the batch is split.
 */
export type FailureKind = 'transient' | 'permanent' | 'unknown'

/** errno codes of a disk, a file system or a connection that cannot serve now. */
const TRANSIENT_CODES = new Set([
  'ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EMFILE', 'ENFILE', 'EAGAIN', 'EBUSY', 'ENOMEM', 'EINTR',
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'ENOTCONN', 'EHOSTUNREACH',
  'ENETUNREACH', 'ENETDOWN', 'EAI_AGAIN', '57P01', '57P03', '53100', '53200', '08000', '08003', '08006',
])

/**
 * Messages of store and disk failures (DuckDB's error classes are message prefixes: `IO Error`,
 * `TransactionContext Error: Failed to commit: Could not write file ...`, `Connection Error`,
 * `FATAL Error`; PostgreSQL's connection errors; Node's fs errors when the code was lost).
 */
const TRANSIENT_MESSAGE =
  /no space left|disk (is )?full|out of (disk )?space|quota exceeded|input\/output error|\bIO Error\b|I\/O error|could not (write|read|open|create|sync|fsync|truncate)|failed to commit|TransactionContext Error|Connection Error|connection (is |was |already )?(closed|refused|terminated|reset|lost)|database (is |has been )?(closed|invalidated)|\b(is|has been) closed\b|not queryable|terminating connection|FATAL Error|Out of Memory Error|read-only file system|too many open files|cannot connect|the database system is (starting up|shutting down)|not currently accepting connections|Query read timeout|canceling statement due to statement timeout|timeout exceeded when trying to connect|Connection terminated|ECONNREFUSED|ENOSPC|EIO\b/i

/** DuckDB's and PostgreSQL's errors about the data of a row: the events are at fault, not the store. */
const PERMANENT_MESSAGE =
  /^(Conversion|Invalid Input|Constraint|Out of Range|Mismatch Type|Not implemented) Error|invalid input syntax|violates (not-null|check|foreign key) constraint|value too long|out of range for type|malformed|invalid byte sequence|invalid unicode/i

/**
 * Classifies a thrown value. An explicit boolean `transient` property (set by an adapter that knows
 * better, see duckdb-event-store.ts) wins; then the errno/SQLSTATE `code`, then the message, through
 * the `cause` chain. When in doubt the answer is `unknown`, which is retried whole before isolating.
 */
export function classifyFailure(err: unknown): FailureKind {
  const seen = new Set<unknown>()
  let sawPermanent = false
  for (let e: unknown = err; e !== null && e !== undefined && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e)
    if (typeof e !== 'object' && typeof e !== 'string') break
    const o = (typeof e === 'object' ? e : {}) as { transient?: unknown; code?: unknown; message?: unknown }
    if (o.transient === true) return 'transient'
    if (o.transient === false) return 'permanent'
    if (typeof o.code === 'string' && TRANSIENT_CODES.has(o.code)) return 'transient'
    const message = typeof e === 'string' ? e : typeof o.message === 'string' ? o.message : ''
    if (TRANSIENT_MESSAGE.test(message)) return 'transient'
    if (PERMANENT_MESSAGE.test(message)) sawPermanent = true
  }
  return sawPermanent ? 'permanent' : 'unknown'
}

/** A short, log- and JSON-safe description of a failure: its code and the first line of its message. */
export function describeFailure(err: unknown): string {
  const o = (err ?? {}) as { code?: unknown; message?: unknown }
  const message = typeof o.message === 'string' ? o.message : String(err)
  const first = message.split('\n')[0]!.slice(0, 300)
  return typeof o.code === 'string' && !first.includes(o.code) ? `${o.code}: ${first}` : first
}
