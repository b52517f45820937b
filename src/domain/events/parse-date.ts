// Mirrors PostHog's `parse_date` (rust/common/types/src/timestamp.rs): RFC 3339 first (a trailing `+HH`
// is read as `+HH:00`), then the lenient formats of the `dateparser` crate that SDKs really send,
// then a naive `YYYY-MM-DDTHH:MM:SS` read as UTC. Anything else is null, never a guess.

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?$/
const SLASH_MDY = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/
const SLASH_YMD = /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/
const EPOCH = /^\d{9,19}$/
const RFC2822 =
  /^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d{1,2}:\d{2}(?::\d{2})?\s*(?:[+-]\d{4}|GMT|UT|UTC|Z|[ECMP][SD]T)$/

/** Milliseconds since the epoch for a client-sent date string, or null when PostHog could not parse it. */
export function parseDate(input: string): number | null {
  const s = input.trim()
  if (s === '') return null
  const iso = ISO.exec(s)
  if (iso) return fromIsoParts(iso)
  if (EPOCH.test(s)) return fromEpochDigits(s)
  const mdy = SLASH_MDY.exec(s)
  if (mdy) return utc(Number(mdy[3]), Number(mdy[1]), Number(mdy[2]), 0, 0, 0, 0)
  const ymd = SLASH_YMD.exec(s)
  if (ymd) return utc(Number(ymd[1]), Number(ymd[2]), Number(ymd[3]), 0, 0, 0, 0)
  if (RFC2822.test(s)) {
    const ms = Date.parse(s)
    return Number.isNaN(ms) ? null : ms
  }
  return null
}

function fromIsoParts(m: RegExpExecArray): number | null {
  const fraction = m[7] ? Number(`0.${m[7]}`) * 1000 : 0
  const local = utc(
    Number(m[1]),
    Number(m[2]),
    Number(m[3]),
    m[4] ? Number(m[4]) : 0,
    m[5] ? Number(m[5]) : 0,
    m[6] ? Number(m[6]) : 0,
    Math.floor(fraction),
  )
  if (local === null) return null
  const zone = m[8]
  if (!zone || zone === 'Z' || zone === 'z' || zone === 'UTC') return local
  const sign = zone[0] === '-' ? -1 : 1
  const digits = zone.slice(1).replace(':', '')
  const hours = Number(digits.slice(0, 2))
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0
  if (hours > 23 || minutes > 59) return null
  return local - sign * (hours * 60 + minutes) * 60_000
}

/** dateparser reads 10-digit values as seconds and 13-digit ones as milliseconds; longer ones are finer units. */
function fromEpochDigits(s: string): number | null {
  const n = Number(s)
  if (s.length <= 11) return n * 1000
  if (s.length <= 14) return n
  if (s.length <= 17) return Math.floor(n / 1000)
  return Math.floor(n / 1_000_000)
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

function utc(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number | null {
  if (mo < 1 || mo > 12 || d < 1 || d > DAYS_IN_MONTH[mo - 1]! || h > 23 || mi > 59 || s > 60) return null
  const isLeap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
  if (mo === 2 && d === 29 && !isLeap) return null
  // A leap second (:60) is folded into the next second, as chrono does when it accepts one.
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms)
  // Date.UTC maps years 0-99 to 1900-1999; set the full year back explicitly.
  if (y < 100) return new Date(t).setUTCFullYear(y)
  return t
}
