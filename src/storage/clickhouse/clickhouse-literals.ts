/**
 * SQL literals rendered client-side: 18.16 has no query parameters (`param_x` is an unknown setting
 * there), so every value a statement carries is written as a literal here and nowhere else.
 */

/** A string literal: backslash and quote escaped (round-trips every string, \0 and U+2028 included). */
export function stringLiteral(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

/** A finite number as a Float64 or Int64 literal; throws on NaN and infinities (never rendered). */
export function numberLiteral(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`)
  return Number.isInteger(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER ? String(n) : `toFloat64(${JSON.stringify(n)})`
}

/** An integer literal (bigint or safe integer). */
export function intLiteral(n: number | bigint): string {
  if (typeof n === 'number' && !Number.isSafeInteger(n)) throw new RangeError(`not a safe integer: ${n}`)
  return String(n)
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A UUID literal (`toUUID('…')`), or null when the text is not a UUID. */
export function uuidLiteral(s: string): string | null {
  return UUID.test(s) ? `toUUID('${s.toLowerCase()}')` : null
}

/** A list of string literals, for `IN (...)`. */
export function stringList(values: readonly string[]): string {
  return values.map(stringLiteral).join(', ')
}
