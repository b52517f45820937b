import { parseDate } from './parse-date.ts'

/** A non-fatal ingestion problem, recorded like PostHog's `ingestion_warnings`; never changes the response. */
export interface IngestionWarning {
  type: 'ignored_invalid_timestamp' | 'event_timestamp_in_future' | 'replaced_invalid_uuid'
  details: Record<string, unknown>
}

export interface TimestampInput {
  /** The event's own `timestamp` field, as sent. */
  timestamp?: unknown
  /** The event's top-level `offset` (ms before `now`). */
  offset?: unknown
  /** The request's sent_at, already parsed; null when absent or invalid. */
  sentAt: Date | null
  /** `properties.$ignore_sent_at`: the client's timestamps are already server-corrected. */
  ignoreSentAt: boolean
  /** Server receive time. */
  now: Date
}

export interface TimestampResult {
  timestamp: Date
  warnings: IngestionWarning[]
}

/** PostHog clamps anything further than this ahead of `now` back to `now`. */
export const FUTURE_EVENT_CUTOFF_MS = 23 * 3600 * 1000

const MAX_DATE_MS = 8.64e15

/**
 * The event time with PostHog's clock-skew correction (Rust `parse_event_timestamp`, which today's
 * PostHog runs; the Node `parseEventTimestamp` it replaced agrees except where noted):
 * - a parseable `timestamp` with a sentAt becomes `now + (timestamp - sentAt)`, without one it is kept;
 *   an unparseable one falls back to `now` (Node: wall-clock time; both warn);
 * - an integer `offset` (even 0) then overrides everything: `now - offset` (Node applied it only
 *   without a timestamp);
 * - a result more than 23 h after `now` becomes `now` (`event_timestamp_in_future`);
 * - a result outside years 0..9999 becomes the Unix epoch (Node: wall-clock time).
 */
export function parseEventTimestamp(input: TimestampInput): TimestampResult {
  const warnings: IngestionWarning[] = []
  const now = input.now.getTime()
  const sentAt = input.ignoreSentAt ? null : input.sentAt
  let result = now

  if (input.timestamp !== undefined && input.timestamp !== null) {
    const parsed = typeof input.timestamp === 'string' ? parseDate(input.timestamp) : null
    if (parsed === null) {
      warnings.push({
        type: 'ignored_invalid_timestamp',
        details: { field: 'timestamp', value: input.timestamp, reason: 'unparseable' },
      })
    } else {
      result = sentAt ? now + (parsed - sentAt.getTime()) : parsed
    }
  }

  const offset = input.offset
  if (typeof offset === 'number' && Number.isInteger(offset)) result = now - offset

  if (result - now > FUTURE_EVENT_CUTOFF_MS) {
    warnings.push({
      type: 'event_timestamp_in_future',
      details: {
        timestamp: input.timestamp ?? '',
        sentAt: input.sentAt ? input.sentAt.toISOString() : '',
        offset: offset ?? '',
        now: input.now.toISOString(),
        result: safeIso(result),
      },
    })
    result = now
  }

  if (!isWithinYearBounds(result)) {
    warnings.push({
      type: 'ignored_invalid_timestamp',
      details: { field: 'timestamp', value: input.timestamp ?? '', offset: offset ?? '', reason: 'out of bounds' },
    })
    result = 0
  }
  return { timestamp: new Date(result), warnings }
}

function isWithinYearBounds(ms: number): boolean {
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_DATE_MS) return false
  const year = new Date(ms).getUTCFullYear()
  return year >= 0 && year <= 9999
}

function safeIso(ms: number): string {
  return Math.abs(ms) <= MAX_DATE_MS ? new Date(ms).toISOString() : String(ms)
}
