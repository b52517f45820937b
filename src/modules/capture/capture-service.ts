import { randomFillSync } from 'node:crypto'
import { extractEvents, normaliseEvent, type DecodedCaptureBody, type RandomBytes } from '../../domain/events/index.ts'
import type { IngestionCounters } from '../../ingestion/ingestion-counters.ts'
import { encodeQueuedEvent } from '../../ingestion/queued-event.ts'
import { QueueFullError, type EventQueue } from '../../queue/event-queue.ts'
import type { ProjectService } from '../projects/project-service.ts'
import { resolvePublicProject } from '../projects/resolve-public-project.ts'
import { AppError } from '../../shared/errors.ts'

export interface CaptureRequest {
  decoded: DecodedCaptureBody
  query: Record<string, unknown>
  method: string
  /** True on `/engage` paths (people updates without an event name become `$identify`). */
  isEngage: boolean
  /** `Authorization: Bearer` token, used when the body names no key. */
  bearer: string | null
  ip: string | null
  /** Receive time: the clock-skew reference and every event's `created_at`. */
  now: Date
}

export interface CaptureResult {
  accepted: number
  dropped: number
}

export interface CaptureDeps {
  projects: ProjectService
  queue: EventQueue
  counters: IngestionCounters
  randomBytes?: RandomBytes
  /** `Retry-After` (seconds) of the 503 answered when the queue cannot write or is full (default 5). */
  retryAfterSeconds?: number
}

/** Random bytes for server-made UUIDv7s, drawn from a pool to keep the per-event cost tiny. */
function pooledRandomBytes(): RandomBytes {
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

/**
 * Capture: finds the project, normalises each event (clock skew from this request's receive time
 * and sent_at, uuid, elements chain...) and puts the accepted ones on the durable queue. Resolves
 * only once the queue has them on disk, so a 200 means "will not be lost". Invalid events inside an
 * accepted request (no name, no or empty distinct_id) are dropped silently and counted.
 * Throws AppError for an unreadable payload or a bad key (the whole request is refused), and
 * `service_unavailable` when the queue cannot write them (disk full, I/O error) or its backlog of
 * unprocessed events is at its limit (the worker has fallen behind).
 */
export function createCaptureService(deps: CaptureDeps) {
  const randomBytes = deps.randomBytes ?? pooledRandomBytes()

  return {
    async capture(req: CaptureRequest): Promise<CaptureResult> {
      const { payload, form } = req.decoded
      const extracted = extractEvents({ payload, form, query: req.query, method: req.method, isEngage: req.isEngage })
      const top = typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? (payload as Record<string, unknown>) : null
      const project = await resolvePublicProject(
        deps.projects,
        extracted.token ?? req.bearer,
        top?.project_id ?? form.project_id ?? req.query.project_id,
      )
      const ctx = { now: req.now, sentAt: extracted.sentAt, ip: req.ip, randomBytes }
      const lines: string[] = []
      let dropped = 0
      for (const raw of extracted.events) {
        const result = normaliseEvent(raw, ctx)
        if (result.kind === 'drop') {
          dropped++
          deps.counters.add('drop', result.reason)
          continue
        }
        lines.push(encodeQueuedEvent(project.id, result.event))
      }
      try {
        await deps.queue.publish(lines)
      } catch (err) {
        if (err instanceof QueueFullError) {
          deps.counters.add('refused', 'backlog_full', lines.length)
          throw new AppError('service_unavailable', 'Too many events are waiting to be processed; retry later.', null, {
            retryAfterSeconds: deps.retryAfterSeconds ?? 5,
            cause: err,
          })
        }
        // Nothing of this request is durable (a failed write is undone): a 503 tells the SDK to
        // send it again; never a 200 for events that are not on disk.
        throw new AppError('service_unavailable', 'Events could not be stored right now; retry later.', null, {
          retryAfterSeconds: deps.retryAfterSeconds ?? 5,
          cause: err,
        })
      }
      deps.counters.add('ok', 'accepted', lines.length)
      return { accepted: lines.length, dropped }
    },
  }
}

export type CaptureService = ReturnType<typeof createCaptureService>
