import { cleanText } from '../events/sanitise-json.ts'

/**
 * What a recording's metadata row needs from one block of rrweb events, computed without I/O.
 * Counting rules follow PostHog's replay ingestion (`session-recording-v2` / the Rust replay
 * consumer): a click is a MouseInteraction (incremental source 2) of type Click (2), DblClick (4)
 * or TouchEnd (9); a keypress is an Input (source 5); activity is any incremental snapshot of the
 * sources rrweb marks as user activity, and active time adds up the gaps of at most 5 s between
 * consecutive active events; console counts come from the `rrweb/console@1` plugin events.
 */
export interface SnapshotSummary {
  /** Smallest and largest rrweb `timestamp` (ms since epoch). */
  startMs: number
  endMs: number
  clicks: number
  keypresses: number
  mouseActivity: number
  consoleLogs: number
  consoleWarns: number
  consoleErrors: number
  activeMs: number
  /** The first page URL seen (Meta event `href`), or null. */
  firstUrl: string | null
  /** Timestamp of `firstUrl`'s event (to pick the session's first URL across blocks). */
  firstUrlMs: number | null
  events: number
}

/** rrweb event types and incremental sources used here (rrweb `types.ts`). */
const META = 4
const INCREMENTAL = 3
const PLUGIN = 6
const SOURCE_MOUSE_MOVE = 1
const SOURCE_MOUSE_INTERACTION = 2
const SOURCE_INPUT = 5
const SOURCE_TOUCH_MOVE = 6
const CLICK_TYPES = new Set([2, 4, 9])
const ACTIVE_SOURCES = new Set([1, 2, 3, 4, 5, 6, 7, 12])
/** Gaps between active events longer than this are idle time (PostHog: 5 s). */
export const ACTIVITY_GAP_MS = 5000

/** A rrweb event as it arrives in `$snapshot_data` (only what is read here is typed). */
export interface RrwebEvent {
  type: number
  timestamp: number
  data?: unknown
}

/** True for a value shaped like a rrweb event: numeric `type` and finite `timestamp`. */
export function isRrwebEvent(v: unknown): v is RrwebEvent {
  if (v === null || typeof v !== 'object') return false
  const e = v as Record<string, unknown>
  return typeof e.type === 'number' && typeof e.timestamp === 'number' && Number.isFinite(e.timestamp)
}

/** Summarises rrweb events (any order); `events` must be non-empty. */
export function summariseSnapshots(events: readonly RrwebEvent[]): SnapshotSummary {
  const s: SnapshotSummary = {
    startMs: Infinity, endMs: -Infinity, clicks: 0, keypresses: 0, mouseActivity: 0,
    consoleLogs: 0, consoleWarns: 0, consoleErrors: 0, activeMs: 0, firstUrl: null, firstUrlMs: null, events: events.length,
  }
  const active: number[] = []
  for (const e of events) {
    if (e.timestamp < s.startMs) s.startMs = e.timestamp
    if (e.timestamp > s.endMs) s.endMs = e.timestamp
    const data = (e.data ?? {}) as Record<string, unknown>
    if (e.type === INCREMENTAL) {
      const source = data.source
      if (typeof source !== 'number') continue
      if (ACTIVE_SOURCES.has(source)) active.push(e.timestamp)
      if (source === SOURCE_MOUSE_INTERACTION && CLICK_TYPES.has(data.type as number)) s.clicks++
      if (source === SOURCE_INPUT) s.keypresses++
      if (source === SOURCE_MOUSE_MOVE || source === SOURCE_MOUSE_INTERACTION || source === SOURCE_TOUCH_MOVE) s.mouseActivity++
    } else if (e.type === META) {
      if (typeof data.href === 'string' && (s.firstUrlMs === null || e.timestamp < s.firstUrlMs)) {
        s.firstUrl = cleanText(data.href.slice(0, 2000))
        s.firstUrlMs = e.timestamp
      }
    } else if (e.type === PLUGIN && data.plugin === 'rrweb/console@1') {
      const level = (data.payload as Record<string, unknown> | undefined)?.level
      if (level === 'error') s.consoleErrors++
      else if (level === 'warn') s.consoleWarns++
      else s.consoleLogs++
    }
  }
  active.sort((a, b) => a - b)
  for (let i = 1; i < active.length; i++) {
    const gap = active[i]! - active[i - 1]!
    if (gap <= ACTIVITY_GAP_MS) s.activeMs += gap
  }
  return s
}
