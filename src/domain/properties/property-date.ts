/**
 * Date parsing for `is_date_before` / `is_date_after` / `is_date_exact`, after PostHog's Rust
 * flags service (rust/feature-flags/src/properties/property_matching.rs and relative_date.rs).
 * Tally has no team time zone yet, so naive date-times are read as UTC (PostHog's default).
 */

/** A filter date: either fixed, or relative to the evaluation time (`-7d`, `24h`, `1y`). */
export type FilterDate =
  | { kind: 'absolute'; ms: number }
  | { kind: 'relative'; amount: number; unit: 'h' | 'd' | 'w' | 'm' | 'y' }

const RELATIVE = /^-?(\d+)([hdwmy])$/
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/
const NAIVE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?$/
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
const RUST_F64 = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i

/** Parses a string the way Rust's `str::parse::<f64>` does; undefined when it would fail. */
export function parseRustFloat(text: string): number | undefined {
  if (!RUST_F64.test(text)) return undefined
  const lower = text.toLowerCase().replace(/^\+/, '')
  if (lower === 'inf' || lower === 'infinity') return Infinity
  if (lower === '-inf' || lower === '-infinity') return -Infinity
  if (lower.endsWith('nan')) return NaN
  return Number(text)
}

// Date.UTC silently rolls 2024-02-30 over into March; chrono rejects it, so do we.
function utc(y: string, mo: string, d: string, h = '0', mi = '0', s = '0', frac = ''): number {
  const ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s, frac ? Math.round(Number('0' + frac) * 1000) : 0)
  const back = new Date(ms)
  const valid =
    back.getUTCFullYear() === +y && back.getUTCMonth() === +mo - 1 && back.getUTCDate() === +d &&
    back.getUTCHours() === +h && back.getUTCMinutes() === +mi && +s < 60
  return valid ? ms : NaN
}

function parseAbsolute(text: string): number {
  let m = RFC3339.exec(text)
  if (m) {
    const base = utc(m[1], m[2], m[3], m[4], m[5], m[6], m[7])
    if (Number.isNaN(base) || m[8] === 'Z' || m[8] === 'z') return base
    const sign = m[8][0] === '-' ? -1 : 1
    return base - sign * (Number(m[8].slice(1, 3)) * 60 + Number(m[8].slice(4, 6))) * 60_000
  }
  m = DATE_ONLY.exec(text)
  if (m) return utc(m[1], m[2], m[3])
  m = NAIVE.exec(text)
  if (m) return utc(m[1], m[2], m[3], m[4], m[5], m[6], m[7])
  // Rust falls back to the `dateparser` crate for other shapes; JS's parser covers the common
  // ones (RFC 2822, "May 6 2024"), read as UTC when no zone is given.
  if (/^\d{10}$/.test(text)) return Number(text) * 1000
  if (/^\d{13}$/.test(text)) return Number(text)
  const hasZone = /(?:[zZ]|GMT|UTC|[+-]\d{2}:?\d{2})$/.test(text.trim())
  const parsed = Date.parse(hasZone ? text : `${text} UTC`)
  return Number.isNaN(parsed) ? Date.parse(text) : parsed
}

/** Parses a filter's date value; null when it is not a string or not a date. */
export function parseFilterDate(value: unknown): FilterDate | null {
  if (typeof value !== 'string') return null
  const rel = RELATIVE.exec(value)
  if (rel) {
    const amount = Number(rel[1])
    return amount < 10_000 ? { kind: 'relative', amount, unit: rel[2] as 'h' } : null
  }
  const ms = parseAbsolute(value)
  return Number.isNaN(ms) ? null : { kind: 'absolute', ms }
}

function subtractMonths(now: number, months: number): number {
  const d = new Date(now)
  const total = d.getUTCFullYear() * 12 + d.getUTCMonth() - months
  const year = Math.floor(total / 12)
  const month = total - year * 12
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
  const day = Math.min(d.getUTCDate(), lastDay)
  return Date.UTC(year, month, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds())
}

/** Resolves a filter date to epoch milliseconds at evaluation time `now` (epoch ms). */
export function resolveFilterDate(date: FilterDate, now: number): number {
  if (date.kind === 'absolute') return date.ms
  switch (date.unit) {
    case 'h':
      return now - date.amount * 3_600_000
    case 'd':
      return now - date.amount * 86_400_000
    case 'w':
      return now - date.amount * 7 * 86_400_000
    case 'm':
      return subtractMonths(now, date.amount)
    case 'y':
      return subtractMonths(now, date.amount * 12)
  }
}

/**
 * Reads a stored property value as a date (epoch ms): numbers and numeric strings are Unix
 * seconds, other strings are parsed like filter dates. NaN when it is not a date.
 */
export function parsePropertyDate(value: unknown, now: number): number {
  if (typeof value === 'number') return value * 1000
  if (typeof value !== 'string') return NaN
  const seconds = parseRustFloat(value)
  if (seconds !== undefined) return Number.isFinite(seconds) ? seconds * 1000 : NaN
  const date = parseFilterDate(value)
  return date === null ? NaN : resolveFilterDate(date, now)
}
