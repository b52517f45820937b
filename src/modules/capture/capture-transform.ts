import { randomFillSync } from 'node:crypto'
import {
  checkCaptureLimits, decodeCaptureBody, DEFAULT_CAPTURE_LIMITS, extractEvents, normaliseEvent, type CaptureBodyInput, type CaptureLimits, type RandomBytes,
} from '../../domain/events/index.ts'
import { encodeQueuedEventParts } from '../../ingestion/queued-event.ts'

/** What one capture request needs decoded, in plain data (it crosses to a decode thread). */
export interface CaptureTransformInput {
  body: CaptureBodyInput
  isEngage: boolean
  /** `Authorization: Bearer` token, used when the body names no key. */
  bearer: string | null
  ip: string | null
  /** Receive time (ms since epoch): the clock-skew reference and every event's `created_at`. */
  nowMs: number
  /** Events per request, keys and elements per event (default DEFAULT_CAPTURE_LIMITS): past one, a 413. */
  limits?: CaptureLimits
}

/**
 * A request's events, normalised and encoded for the queue, before its project is known: each
 * queue message is `heads[i] + projectId + tails[i]` (see `joinQueuedLines`). The project is
 * resolved from `token`/`projectIdHint` afterwards, on the main thread, which holds the project cache.
 */
export interface CaptureTransformOutput {
  token: string | null
  /** `project_id` of the body, form or query, as given (resolvePublicProject checks it). */
  projectIdHint: unknown
  heads: string[]
  tails: string[]
  /** Reason of each dropped event (no name, no distinct id...). */
  drops: string[]
}

/**
 * Decode (gzip/lz64/base64/form, JSON, text cleaning), extract and normalise a capture request and
 * encode its events: the CPU-heavy part of capture, pure (time and randomness from the input and
 * `randomBytes`), so it runs on the event loop or in a decode thread alike. Throws AppError as
 * decodeCaptureBody/extractEvents/checkCaptureLimits do (400 `invalid_payload`, 413 `payload_too_large`...).
 */
export function transformCaptureRequest(input: CaptureTransformInput, randomBytes: RandomBytes): CaptureTransformOutput {
  const query = input.body.query ?? {}
  const extract = (payload: unknown, form: Record<string, string>) => extractEvents({ payload, form, query, method: input.body.method, isEngage: input.isEngage })
  // Before any per-event work, and before the text-cleaning walk of every key: a request over a count
  // limit costs the parse and at most the limit's steps (extracting the events only reads the payload).
  const limits = input.limits ?? DEFAULT_CAPTURE_LIMITS
  const { payload, form } = decodeCaptureBody({ ...input.body, check: (parsed, f) => checkCaptureLimits(extract(parsed, f).events, limits) })
  const extracted = extract(payload, form)
  const top = typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? (payload as Record<string, unknown>) : null
  const ctx = { now: new Date(input.nowMs), sentAt: extracted.sentAt, ip: input.ip, randomBytes, ownsRaw: true }
  const heads: string[] = []
  const tails: string[] = []
  const drops: string[] = []
  for (const raw of extracted.events) {
    const result = normaliseEvent(raw, ctx)
    if (result.kind === 'drop') {
      drops.push(result.reason)
      continue
    }
    const { head, tail } = encodeQueuedEventParts(result.event)
    heads.push(head)
    tails.push(tail)
  }
  return {
    token: extracted.token ?? input.bearer,
    projectIdHint: top?.project_id ?? form.project_id ?? query.project_id,
    heads,
    tails,
    drops,
  }
}

/** The queue messages of a transformed request once its project is known. */
export function joinQueuedLines(out: Pick<CaptureTransformOutput, 'heads' | 'tails'>, projectId: number): string[] {
  const id = String(projectId)
  const lines: string[] = new Array(out.heads.length)
  for (let i = 0; i < lines.length; i++) lines[i] = out.heads[i]! + id + out.tails[i]!
  return lines
}

/** Random bytes for server-made UUIDv7s, drawn from a pool to keep the per-event cost tiny. */
export function pooledRandomBytes(): RandomBytes {
  const pool = Buffer.allocUnsafe(64 * 1024)
  let at = pool.length
  return (n) => {
    if (at + n > pool.length) {
      randomFillSync(pool)
      at = 0
    }
    at += n
    return pool.subarray(at - n, at)
  }
}
