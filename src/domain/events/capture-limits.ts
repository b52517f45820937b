import { AppError } from '../../shared/errors.ts'
import type { RawEvent } from './extract-events.ts'

/**
 * Bounds on the work one capture request may ask for (each is an env var, see load-config.ts).
 * PostHog's capture bounds only sizes (2 MB per event endpoint, 20 MB per /batch, `EventTooBig` 413
 * past its event size after decompression) and its property-defs service skips an event of more than
 * 10,000 updates. Tally refuses the request the same way, with a 413 naming the limit, as soon as one
 * event is over a count limit: the SDK is told (posthog-js logs a 413 and does not retry it), and
 * nothing of the request is stored, so no event is silently cut short.
 */
export interface CaptureLimits {
  /** Events in one request (a /batch or an array). */
  readonly maxEvents: number
  /** Keys of one event's `properties`, `$set` and `$set_once` (top level and in properties) and `$group_set`, together. */
  readonly maxKeysPerEvent: number
  /** Entries of one event's `$elements`, or elements in its `$elements_chain` text. */
  readonly maxElementsPerEvent: number
}

export const DEFAULT_CAPTURE_LIMITS: CaptureLimits = { maxEvents: 2_000, maxKeysPerEvent: 1_000, maxElementsPerEvent: 500 }

const isBag = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

// Bags inside `properties` whose keys are counted themselves, not as one key each.
const NESTED_BAGS = new Set(['$set', '$set_once', '$group_set'])

/** Own keys of the bags counted, stopping once past `limit` (an event of 100,000 keys costs `limit` steps). */
function countKeys(bags: readonly unknown[], limit: number): number {
  let n = 0
  for (const bag of bags) {
    if (!isBag(bag)) continue
    for (const key in bag) {
      if (!Object.hasOwn(bag, key) || (bag === bags[0] && NESTED_BAGS.has(key) && isBag(bag[key]))) continue
      if (++n > limit) return n
    }
  }
  return n
}

/** Elements of `$elements` (its length) or of `$elements_chain` (`;`-separated: an upper bound when a value holds `;`). */
function countElements(properties: Record<string, unknown>, limit: number): number {
  if (Array.isArray(properties.$elements)) return properties.$elements.length
  const chain = properties.$elements_chain
  if (typeof chain !== 'string') return 0
  let n = chain === '' ? 0 : 1
  for (let i = chain.indexOf(';'); i !== -1 && n <= limit; i = chain.indexOf(';', i + 1)) n++
  return n
}

function tooLarge(what: string, limit: number, env: string, index: number | null): AppError {
  const where = index === null ? 'The request' : `Event ${index} of the request`
  return new AppError('payload_too_large', `${where} has more than ${limit} ${what} (${env}); nothing of it was stored.`, null, { limit: env })
}

/**
 * Throws a 413 (`payload_too_large`) naming the limit when the request holds more events, or one
 * event more keys or elements, than `limits` allow. Cost: at most `limit` + 1 steps per count.
 */
export function checkCaptureLimits(events: readonly RawEvent[], limits: CaptureLimits): void {
  if (events.length > limits.maxEvents) throw tooLarge('events', limits.maxEvents, 'TALLY_CAPTURE_MAX_EVENTS', null)
  for (let i = 0; i < events.length; i++) {
    const raw = events[i]!
    const props = isBag(raw.properties) ? raw.properties : {}
    const bags = [props, raw.$set, raw.$set_once, props.$set, props.$set_once, props.$group_set]
    if (countKeys(bags, limits.maxKeysPerEvent) > limits.maxKeysPerEvent) {
      throw tooLarge('property keys', limits.maxKeysPerEvent, 'TALLY_CAPTURE_MAX_EVENT_KEYS', i)
    }
    if (countElements(props, limits.maxElementsPerEvent) > limits.maxElementsPerEvent) {
      throw tooLarge('elements', limits.maxElementsPerEvent, 'TALLY_CAPTURE_MAX_EVENT_ELEMENTS', i)
    }
  }
}
