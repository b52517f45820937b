import type { Interval, ResolvedRange } from './date-range.ts'
import { offsetMs, toWallTime } from './zoned-time.ts'

/**
 * The zone's UTC offset over a span of time, as segments: `offsetMs` applies to instants before
 * `until` (epoch ms; null for the last segment). A zone without DST in the span is one segment.
 */
export interface OffsetSegment {
  until: number | null
  offsetMs: number
}

const DAY = 86_400_000
const HOUR = 3_600_000

/** The offsets of the zone between `from` and `to`, with each change found to the millisecond. */
export function offsetSegments(from: Date, to: Date, timeZone: string): OffsetSegment[] {
  const segments: OffsetSegment[] = []
  let current = offsetMs(from, timeZone)
  for (let t = from.getTime(); t < to.getTime(); t += DAY) {
    const next = Math.min(t + DAY, to.getTime())
    if (offsetMs(new Date(next), timeZone) === current) continue
    // The change lies in (t, next]: bisect to the first instant with the new offset.
    let lo = t
    let hi = next
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (offsetMs(new Date(mid), timeZone) === current) lo = mid
      else hi = mid
    }
    segments.push({ until: hi, offsetMs: current })
    current = offsetMs(new Date(hi), timeZone)
  }
  segments.push({ until: null, offsetMs: current })
  return segments
}

/**
 * The key of the bucket holding an instant, as the dialects compute it in SQL: for hours, the
 * instant the local hour starts (a repeated 02:00 is two keys); for days, weeks (Sunday start) and
 * months, the local wall-clock start written as if it were UTC (epoch ms). Keys of consecutive days
 * differ by exactly 86,400,000 even across DST, which keeps shifts plain arithmetic.
 */
export function bucketKey(instant: Date, interval: Interval, timeZone: string): number {
  const off = offsetMs(instant, timeZone)
  const local = instant.getTime() + off
  if (interval === 'hour') return Math.floor(local / HOUR) * HOUR - off
  const day = Math.floor(local / DAY)
  if (interval === 'day') return day * DAY
  if (interval === 'week') return (day - (((day + 4) % 7) + 7) % 7) * DAY
  const w = toWallTime(instant, timeZone)
  return Date.UTC(w.year, w.month - 1, 1)
}

/** The key `n` intervals after `key` (what the `shift` expression computes in SQL). */
export function shiftKey(key: number, interval: Interval, n: number): number {
  if (interval === 'hour') return key + n * HOUR
  if (interval === 'day') return key + n * DAY
  if (interval === 'week') return key + 7 * n * DAY
  const d = new Date(key)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1)
}

/** Keys of the range's buckets, in order. */
export function rangeKeys(range: ResolvedRange): number[] {
  return range.buckets.map((b) => bucketKey(b, range.interval, range.timeZone))
}
