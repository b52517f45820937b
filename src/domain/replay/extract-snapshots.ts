import { AppError } from '../../shared/errors.ts'
import { cleanText } from '../events/sanitise-json.ts'
import { isRrwebEvent, type RrwebEvent } from './summarise-snapshots.ts'

/** The rrweb events of one session and window sent in one `/s/` request. */
export interface SnapshotGroup {
  sessionId: string
  windowId: string
  distinctId: string
  events: RrwebEvent[]
}

/** Session and window ids name files on disk: a safe alphabet, as the uuids posthog-js makes. */
const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/

/**
 * Reads the `$snapshot` events of a `/s/` payload (posthog-js sends an array; a batch object or one
 * event are taken too) into groups by (session, window), in arrival order. As PostHog's Rust
 * capture does for replay, a request with an event lacking `$session_id` or `$snapshot_data` is
 * refused whole (400); events other than `$snapshot` are ignored, and rrweb items that are not
 * rrweb events (no numeric `type`/`timestamp`) are dropped.
 */
export function extractSnapshotGroups(events: readonly Record<string, unknown>[]): SnapshotGroup[] {
  const groups = new Map<string, SnapshotGroup>()
  for (const ev of events) {
    if (ev.event !== '$snapshot' && ev.event !== '$snapshot_items') continue
    const props = (ev.properties !== null && typeof ev.properties === 'object' ? ev.properties : {}) as Record<string, unknown>
    const sessionId = props.$session_id
    if (typeof sessionId !== 'string' || sessionId === '') throw new AppError('invalid_payload', 'Invalid $snapshot event: missing $session_id.', '$session_id')
    if (!SAFE_ID.test(sessionId)) throw new AppError('invalid_payload', 'Invalid $snapshot event: $session_id is not a valid id.', '$session_id')
    const windowRaw = props.$window_id ?? sessionId
    const windowId = typeof windowRaw === 'string' && SAFE_ID.test(windowRaw) ? windowRaw : sessionId
    const data = props.$snapshot_data ?? props.$snapshot_items
    if (data === undefined || data === null) throw new AppError('invalid_payload', 'Invalid $snapshot event: missing $snapshot_data.', '$snapshot_data')
    const distinct = ev.distinct_id ?? ev.$distinct_id ?? props.distinct_id
    if ((typeof distinct !== 'string' && typeof distinct !== 'number') || String(distinct).trim() === '') {
      throw new AppError('invalid_payload', 'Invalid $snapshot event: missing distinct_id.', 'distinct_id')
    }
    const items = (Array.isArray(data) ? data : [data]).filter(isRrwebEvent)
    if (items.length === 0) continue
    const key = `${sessionId}\u0000${windowId}`
    const group = groups.get(key)
    if (group) group.events.push(...items)
    else groups.set(key, { sessionId, windowId, distinctId: cleanText(String(distinct).trim().slice(0, 200)), events: items })
  }
  return [...groups.values()]
}
