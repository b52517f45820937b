import { parseDate } from './parse-date.ts'

export interface SentAtResult {
  sentAt: Date | null
  /** The raw value when one was given but could not be read (PostHog ignores it with a warning). */
  invalid: string | null
}

const EPOCH = /^\d+(\.\d+)?$/

/**
 * The request's sent_at. Rust capture prefers the batch object's `sent_at`, then query `_`
 * (posthog-js's request time in ms); Django read `_` first but both agree whenever both are present
 * because posthog-js sets them to the same instant. Epoch values longer than 11 characters are
 * milliseconds, shorter ones seconds (Django's rule; Rust ignores second-precision values).
 * An unreadable value is ignored, never an error (Rust).
 */
export function parseSentAt(bodySentAt: unknown, queryUnderscore: unknown): SentAtResult {
  for (const candidate of [bodySentAt, queryUnderscore]) {
    if (candidate === undefined || candidate === null || candidate === '') continue
    const parsed = readSentAt(candidate)
    if (parsed !== null) return { sentAt: new Date(parsed), invalid: null }
    return { sentAt: null, invalid: String(candidate) }
  }
  return { sentAt: null, invalid: null }
}

function readSentAt(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? fromEpoch(String(value), value) : null
  if (typeof value !== 'string') return null
  if (EPOCH.test(value)) return fromEpoch(value, Number(value))
  const ms = parseDate(value)
  return ms !== null && Math.abs(ms) <= 8.64e15 ? ms : null
}

function fromEpoch(text: string, n: number): number {
  return text.length > 11 ? Math.floor(n) : Math.floor(n) * 1000
}
