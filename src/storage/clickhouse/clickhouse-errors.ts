/**
 * ClickHouse's error codes that mean the server cannot do it now (the data is not at fault): memory,
 * disk, too many parts or queries, timeouts, a replica or ZooKeeper away, a server shutting down.
 * See ClickHouse's ErrorCodes.cpp (same numbers on 18.16 and current releases).
 */
const TRANSIENT_CODES = new Set([
  '159', // TIMEOUT_EXCEEDED
  '160', // TOO_SLOW
  '164', // READONLY (a server put in read-only mode, e.g. ZooKeeper away)
  '202', // TOO_MANY_SIMULTANEOUS_QUERIES
  '203', // NO_FREE_CONNECTION
  '209', // SOCKET_TIMEOUT
  '210', // NETWORK_ERROR
  '225', // NO_ZOOKEEPER
  '241', // MEMORY_LIMIT_EXCEEDED
  '242', // TABLE_IS_READ_ONLY
  '243', // NOT_ENOUGH_SPACE
  '252', // TOO_MANY_PARTS
  '319', // UNKNOWN_STATUS_OF_INSERT
  '999', // KEEPER_EXCEPTION
  '1000', // POCO_EXCEPTION (I/O, e.g. "No space left on device")
])

/** Errors about the rows of an insert: the events are at fault. */
const PERMANENT_CODES = new Set([
  '6', // CANNOT_PARSE_TEXT
  '26', // CANNOT_PARSE_QUOTED_STRING
  '27', // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  '38', // CANNOT_PARSE_DATE
  '41', // CANNOT_PARSE_DATETIME
  '53', // TYPE_MISMATCH
  '69', // ARGUMENT_OUT_OF_BOUND
  '72', // CANNOT_PARSE_NUMBER
  '117', // INCORRECT_DATA
  '376', // CANNOT_PARSE_UUID
])

/** Messages of a server that does not answer, whatever the client wrapped them in. */
const TRANSIENT_MESSAGE = /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|socket hang up|Timeout error|No space left|Cannot reserve .* space|Memory limit|Too many (parts|simultaneous queries)/i

/**
 * Sets a boolean `transient` on a ClickHouse failure when its kind is known (left unset when unsure):
 * the ingestion pipeline retries a transient batch whole and never dead-letters it for that, and the
 * HTTP layer answers 503 with Retry-After (src/shared/classify-failure.ts, src/http/error-handler.ts).
 */
export function markClickHouseTransience(err: unknown): unknown {
  if (!(err instanceof Error) || 'transient' in err) return err
  const code = (err as { code?: unknown }).code
  const c = clickHouseCode(err) || (typeof code === 'string' ? code : typeof code === 'number' ? String(code) : '')
  if (TRANSIENT_CODES.has(c) || TRANSIENT_MESSAGE.test(err.message) || (/^E[A-Z]+$/.test(c) && c !== 'ERR_INVALID_ARG_TYPE')) {
    return Object.assign(err, { transient: true })
  }
  if (PERMANENT_CODES.has(c)) return Object.assign(err, { transient: false })
  return err
}

/**
 * ClickHouse's numeric error code of a failure ('' when it is not one of the server's). The client
 * sets `code` only on messages of current releases (`... (TYPE_NAME)`); 18.16 writes
 * `Code: 184, e.displayText() = DB::Exception: ...`, which the client passes on as a plain Error, so
 * the code is read from the message then.
 */
export function clickHouseCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code === 'string' && /^\d+$/.test(code)) return code
  const message = err instanceof Error ? err.message : ''
  return /^Code: (\d+)[,.]/.exec(message)?.[1] ?? ''
}

/** A server error's first line without the version and 18.16's `e.displayText() = DB::Exception:` wrapping: `Code: 184, Aggregate function ...`. */
export function clickHouseMessage(err: unknown): string {
  const m = (err instanceof Error ? err.message : String(err)).split('\n')[0]!
  return m
    .replace(/^Code: (\d+), e\.displayText\(\) = DB::Exception: /, 'Code: $1, ')
    .replace(/,? e\.what\(\) = DB::Exception\s*$/, '')
    .replace(/\s*\(version [^)]*\)\s*$/, '')
    .slice(0, 300)
}
