import { validationError } from '../../shared/errors.ts'
import { addWall, formatWall, fromWallTime, offsetMs, pad2, toWallTime, weekday, type WallTime } from './zoned-time.ts'

export type Interval = 'hour' | 'day' | 'week' | 'month'
export const INTERVALS: readonly Interval[] = ['hour', 'day', 'week', 'month']

/** PostHog's `DateRange` as sent: relative (`-7d`, `mStart`, `all`) or absolute dates. */
export interface DateRangeInput {
  date_from?: string | null
  date_to?: string | null
  explicitDate?: boolean | null
}

/** A date range resolved in the project's zone: `[from, to)` and its interval buckets. */
export interface ResolvedRange {
  from: Date
  /** Exclusive end. */
  to: Date
  interval: Interval
  timeZone: string
  /** Start instant of each bucket, in order; the first is `from`. */
  buckets: Date[]
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const UNIT = { h: 'hour', d: 'day', w: 'week', m: 'month', q: 'quarter', y: 'year' } as const
const RELATIVE = /^-?(\d+)?([hdwmqy])(Start|End)?$/
const ABSOLUTE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/

/** Start of the interval holding `instant` (weeks start on Sunday, PostHog's default `week_start_day`). */
export function startOfInterval(instant: Date, interval: Interval, timeZone: string): Date {
  if (interval === 'hour') {
    // Whole hours of the local clock, found through the offset: a repeated 02:00 on a fall-back day is two buckets.
    const off = offsetMs(instant, timeZone)
    return new Date(Math.floor((instant.getTime() + off) / 3_600_000) * 3_600_000 - off)
  }
  return fromWallTime(startOfWall(toWallTime(instant, timeZone), interval), timeZone)
}

function startOfWall(w: WallTime, unit: Interval | 'quarter' | 'year'): WallTime {
  const day = { ...w, hour: 0, minute: 0, second: 0 }
  if (unit === 'hour') return { ...w, minute: 0, second: 0 }
  if (unit === 'day') return day
  if (unit === 'week') return addWall(day, 'day', -weekday(day))
  if (unit === 'month') return { ...day, day: 1 }
  if (unit === 'quarter') return { ...day, day: 1, month: Math.floor((w.month - 1) / 3) * 3 + 1 }
  return { ...day, day: 1, month: 1 }
}

/** The start of the next interval after the bucket starting at `start`. */
export function nextBucket(start: Date, interval: Interval, timeZone: string): Date {
  if (interval === 'hour') return startOfInterval(new Date(start.getTime() + 3_600_000), 'hour', timeZone)
  return fromWallTime(addWall(toWallTime(start, timeZone), interval, 1), timeZone)
}

/**
 * One end of a range as PostHog's `relative_date_parse` reads it: `-7d`, `-1m`, `-24h`, `mStart`,
 * `-1dStart`, `dEnd`, or an absolute date (local to the zone unless it carries an offset).
 * `isDateOnly` tells the caller to round the end to the end of that day.
 */
function parseDate(text: string, now: Date, timeZone: string, attr: string): { at: Date; isDateOnly: boolean; isRelative: boolean } {
  const rel = RELATIVE.exec(text)
  if (rel && (text.startsWith('-') || rel[3])) {
    const n = rel[1] === undefined ? 0 : Number(rel[1])
    const unit = UNIT[rel[2] as keyof typeof UNIT]
    const wallNow = toWallTime(now, timeZone)
    let w = unit === 'quarter' ? addWall(wallNow, 'month', -3 * n) : addWall(wallNow, unit, -n)
    if (rel[3]) {
      w = startOfWall(w, unit)
      if (rel[3] === 'End') w = addWall(addWall(w, unit === 'quarter' ? 'month' : unit, unit === 'quarter' ? 3 : 1), 'hour', 0)
      const at = fromWallTime(w, timeZone)
      return { at: rel[3] === 'End' ? new Date(at.getTime() - 1) : at, isDateOnly: false, isRelative: true }
    }
    return { at: unit === 'hour' ? new Date(now.getTime() - n * 3_600_000) : fromWallTime(w, timeZone), isDateOnly: false, isRelative: true }
  }
  const abs = ABSOLUTE.exec(text)
  if (!abs) throw validationError(attr, `Invalid date "${text}".`, 'invalid_date')
  const [, y, mo, d, h, mi, s, zone] = abs
  const wall = { year: +y!, month: +mo!, day: +d!, hour: h ? +h : 0, minute: mi ? +mi : 0, second: s ? +s : 0 }
  if (wall.month < 1 || wall.month > 12 || wall.day < 1 || wall.day > 31 || wall.hour > 23 || wall.minute > 59 || wall.second > 59) {
    throw validationError(attr, `Invalid date "${text}".`, 'invalid_date')
  }
  if (zone) {
    const iso = `${y}-${mo}-${d}T${pad2(wall.hour)}:${pad2(wall.minute)}:${pad2(wall.second)}${zone === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`}`
    return { at: new Date(iso), isDateOnly: false, isRelative: false }
  }
  return { at: fromWallTime(wall, timeZone), isDateOnly: h === undefined, isRelative: false }
}

/**
 * Resolves PostHog's date range in the zone, as its `QueryDateRange` does: the start rounds down to
 * its interval's start (so a week bucket is whole), the end rounds up to the end of its day (hour
 * for hourly) unless `explicitDate`. Default: `-7d` to now. `earliest` answers `date_from: 'all'`.
 */
export function resolveDateRange(
  input: DateRangeInput | undefined,
  interval: Interval,
  ctx: {
    now: Date
    timeZone: string
    earliest?: Date | null
    defaultFrom?: string
    /**
     * Hourly with a date-only `date_to`: end at that day's 00:00 hour, holding only events at 00:00:00
     * exactly (PostHog's `QueryDateRange.date_to` for hourly absolute dates; used by stickiness).
     */
    hourlyDateOnlyEndsAtMidnight?: boolean
  },
  attr = 'dateRange',
): ResolvedRange {
  const { now, timeZone } = ctx
  const explicit = input?.explicitDate === true
  const fromText = input?.date_from ?? ctx.defaultFrom ?? '-7d'
  let from: Date
  if (fromText === 'all') from = ctx.earliest ?? now
  else from = parseDate(fromText, now, timeZone, `${attr}.date_from`).at
  let to: Date
  let endsAtMidnight = false
  if (input?.date_to) {
    const parsed = parseDate(input.date_to, now, timeZone, `${attr}.date_to`)
    to = new Date(parsed.at.getTime() + (parsed.isDateOnly && !explicit ? 0 : 1))
    endsAtMidnight = parsed.isDateOnly && interval === 'hour' && ctx.hourlyDateOnlyEndsAtMidnight === true
    if (endsAtMidnight) to = new Date(startOfInterval(parsed.at, 'day', timeZone).getTime() + 1)
    else if (parsed.isDateOnly && !explicit) to = nextBucket(startOfInterval(parsed.at, 'day', timeZone), 'day', timeZone)
  } else {
    to = new Date(now.getTime() + 1)
  }
  if (!explicit && endsAtMidnight) {
    from = startOfInterval(from, 'hour', timeZone)
  } else if (!explicit) {
    // Whole days (hours when hourly) at both ends, PostHog's rounding.
    from = startOfInterval(from, interval === 'hour' ? 'hour' : 'day', timeZone)
    const end = startOfInterval(new Date(to.getTime() - 1), interval === 'hour' ? 'hour' : 'day', timeZone)
    to = nextBucket(end, interval === 'hour' ? 'hour' : 'day', timeZone)
  }
  if (to.getTime() <= from.getTime()) throw validationError(`${attr}.date_to`, 'date_to must be after date_from.', 'invalid_date')
  const first = startOfInterval(from, interval, timeZone)
  const buckets: Date[] = []
  for (let b = first; b.getTime() < to.getTime(); b = nextBucket(b, interval, timeZone)) {
    buckets.push(b)
    if (buckets.length > 10_000) throw validationError(`${attr}.date_from`, 'The date range holds more than 10,000 intervals: choose a longer interval.', 'invalid_date')
  }
  return { from: first, to, interval, timeZone, buckets }
}

/** PostHog's `days` entry of a bucket: `YYYY-MM-DD` (with ` HH:MM:SS` when hourly), local to the zone. */
export function bucketDay(start: Date, interval: Interval, timeZone: string): string {
  return formatWall(toWallTime(start, timeZone), interval === 'hour')
}

/** PostHog's `labels` entry: `1-Jun-2024`, `1-Jun-2024 13:00` hourly, `Jun 2024` monthly. */
export function bucketLabel(start: Date, interval: Interval, timeZone: string): string {
  const w = toWallTime(start, timeZone)
  if (interval === 'month') return `${MONTHS[w.month - 1]} ${w.year}`
  const date = `${w.day}-${MONTHS[w.month - 1]}-${w.year}`
  return interval === 'hour' ? `${date} ${pad2(w.hour)}:${pad2(w.minute)}` : date
}

/** The same range one period earlier (`compareFilter`): as long as the range, ending where it starts. */
export function previousPeriod(range: ResolvedRange): ResolvedRange {
  const length = range.to.getTime() - range.from.getTime()
  const wallFrom = toWallTime(range.from, range.timeZone)
  const wallTo = toWallTime(range.to, range.timeZone)
  // Whole days back (a DST day inside keeps days aligned to midnight), hours when hourly.
  const days = Math.round((Date.UTC(wallTo.year, wallTo.month - 1, wallTo.day) - Date.UTC(wallFrom.year, wallFrom.month - 1, wallFrom.day)) / 86_400_000)
  const shift = (d: Date): Date =>
    range.interval === 'hour' || days === 0 ? new Date(d.getTime() - length) : fromWallTime(addWall(toWallTime(d, range.timeZone), 'day', -days), range.timeZone)
  const from = startOfInterval(shift(range.from), range.interval, range.timeZone)
  const to = shift(range.to)
  const buckets: Date[] = []
  for (let b = from; b.getTime() < to.getTime() && buckets.length < range.buckets.length; b = nextBucket(b, range.interval, range.timeZone)) buckets.push(b)
  return { ...range, from, to, buckets }
}

/** An instant moved by `n` intervals on the zone's wall clock (hours move the instant). */
export function shiftInstant(at: Date, interval: Interval, n: number, timeZone: string): Date {
  if (interval === 'hour') return new Date(at.getTime() + n * 3_600_000)
  return fromWallTime(addWall(toWallTime(at, timeZone), interval, n), timeZone)
}

/** One instant from PostHog's date text (`-24h`, `-7d`, `2024-06-01`, an ISO time), for bounds like `after`/`before`. */
export function resolveInstant(text: string, now: Date, timeZone: string, attr: string): Date {
  return parseDate(text, now, timeZone, attr).at
}
