import { validationError } from '../../shared/errors.ts'

/** A wall-clock time in some time zone (month 1-12). */
export interface WallTime {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    })
    formatters.set(timeZone, f)
  }
  return f
}

/** True when the runtime knows the IANA zone name. */
export function isTimeZone(name: string): boolean {
  try {
    formatterFor(name)
    return true
  } catch {
    return false
  }
}

/** Throws a 400 naming `attr` when the zone is unknown. */
export function assertTimeZone(name: string, attr: string): void {
  if (!isTimeZone(name)) throw validationError(attr, `"${name}" is not a valid choice.`, 'invalid_choice')
}

/** The wall-clock time of an instant in a zone. */
export function toWallTime(instant: Date, timeZone: string): WallTime {
  const parts: Record<string, number> = {}
  for (const p of formatterFor(timeZone).formatToParts(instant)) if (p.type !== 'literal') parts[p.type] = Number(p.value)
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! }
}

/** Offset of the zone from UTC at an instant, in milliseconds (east positive). */
export function offsetMs(instant: Date, timeZone: string): number {
  const w = toWallTime(instant, timeZone)
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second)
  return asUtc - Math.floor(instant.getTime() / 1000) * 1000
}

/**
 * The instant a wall-clock time names in a zone. A time skipped by a DST gap moves forward by the
 * gap (02:30 on a spring-forward day is 03:30); an ambiguous one (fall back) is its first occurrence.
 */
export function fromWallTime(w: WallTime, timeZone: string): Date {
  const naive = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second)
  // Two passes settle the offset except inside a gap, where the earlier offset is kept (moves forward).
  const first = naive - offsetMs(new Date(naive), timeZone)
  const second = naive - offsetMs(new Date(first), timeZone)
  const earlier = naive - Math.max(offsetMs(new Date(naive - 86_400_000), timeZone), offsetMs(new Date(naive + 86_400_000), timeZone))
  const candidates = [first, second, earlier].filter((t) => sameWall(toWallTime(new Date(t), timeZone), w))
  if (candidates.length > 0) return new Date(Math.min(...candidates))
  return new Date(Math.min(first, second))
}

function sameWall(a: WallTime, b: WallTime): boolean {
  return a.year === b.year && a.month === b.month && a.day === b.day && a.hour === b.hour && a.minute === b.minute && a.second === b.second
}

/** Calendar arithmetic on the wall clock (days and months roll over as calendars do). */
export function addWall(w: WallTime, unit: 'hour' | 'day' | 'week' | 'month' | 'year', n: number): WallTime {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second))
  if (unit === 'hour') d.setUTCHours(d.getUTCHours() + n)
  if (unit === 'day') d.setUTCDate(d.getUTCDate() + n)
  if (unit === 'week') d.setUTCDate(d.getUTCDate() + 7 * n)
  if (unit === 'month') {
    // PostHog (relativedelta): the 31st minus one month is the 30th/28th, not the 1st of the month after.
    const day = d.getUTCDate()
    d.setUTCDate(1)
    d.setUTCMonth(d.getUTCMonth() + n)
    d.setUTCDate(Math.min(day, daysInMonth(d.getUTCFullYear(), d.getUTCMonth() + 1)))
  }
  if (unit === 'year') return addWall(w, 'month', 12 * n)
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() }
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}

/** Day of week of a wall date, 0 = Sunday. */
export function weekday(w: WallTime): number {
  return new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay()
}

export const pad2 = (n: number): string => String(n).padStart(2, '0')

/** `YYYY-MM-DD`, plus ` HH:MM:SS` when `withTime`. */
export function formatWall(w: WallTime, withTime = false): string {
  const date = `${w.year}-${pad2(w.month)}-${pad2(w.day)}`
  return withTime ? `${date} ${pad2(w.hour)}:${pad2(w.minute)}:${pad2(w.second)}` : date
}

/** An instant as ISO 8601 in the zone with its offset (`2024-06-01T12:00:00+02:00`), as PostHog serialises times. */
export function formatInZone(instant: Date, timeZone: string): string {
  const w = toWallTime(instant, timeZone)
  const off = Math.round(offsetMs(instant, timeZone) / 60_000)
  const sign = off < 0 ? '-' : '+'
  const ms = instant.getTime() % 1000
  const fraction = ms === 0 ? '' : `.${String((ms + 1000) % 1000).padStart(3, '0')}000`
  return `${formatWall(w, true).replace(' ', 'T')}${fraction}${sign}${pad2(Math.floor(Math.abs(off) / 60))}:${pad2(Math.abs(off) % 60)}`
}
