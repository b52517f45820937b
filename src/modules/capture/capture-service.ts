import type { IngestionCounters } from '../../ingestion/ingestion-counters.ts'
import { MessageTooLargeError, QueueFullError, type EventQueue } from '../../queue/event-queue.ts'
import type { ProjectService } from '../projects/project-service.ts'
import { resolvePublicProject } from '../projects/resolve-public-project.ts'
import { AppError } from '../../shared/errors.ts'
import { crashPoint } from '../../shared/crash-points.ts'
import type { CaptureLimits, RandomBytes } from '../../domain/events/index.ts'
import { joinQueuedLines, pooledRandomBytes, transformCaptureRequest, type CaptureTransformInput, type CaptureTransformOutput } from './capture-transform.ts'

/** A capture request as the routes read it: the raw body and what decoding it needs. */
export type CaptureRequest = CaptureTransformInput

export interface CaptureResult {
  accepted: number
  dropped: number
}

export interface CaptureDeps {
  projects: ProjectService
  queue: EventQueue
  counters: IngestionCounters
  randomBytes?: RandomBytes
  /** Events per request, keys and elements per event (default DEFAULT_CAPTURE_LIMITS). */
  limits?: CaptureLimits
  /** `Retry-After` (seconds) of the 503 answered when the queue cannot write or is full (default 5). */
  retryAfterSeconds?: number
}

/** Decodes large bodies elsewhere (a decode thread pool); small ones are decoded inline. */
export interface CaptureOffload {
  /** Bodies (plus `?data=`) of at least this many bytes go to `run`. */
  minBytes: number
  run(input: CaptureTransformInput): Promise<CaptureTransformOutput>
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
  let offload: CaptureOffload | null = null

  return {
    /** From now on, bodies of `minBytes` or more are decoded by `run` (null: all inline). */
    setOffload(o: CaptureOffload | null) {
      offload = o
    },

    async capture(request: CaptureRequest): Promise<CaptureResult> {
      const req = deps.limits ? { ...request, limits: deps.limits } : request
      const out = offload !== null && requestBytes(req) >= offload.minBytes ? await offload.run(req) : transformCaptureRequest(req, randomBytes)
      crashPoint('capture.body-received')
      const project = await resolvePublicProject(deps.projects, out.token, out.projectIdHint)
      for (const reason of out.drops) deps.counters.add('drop', reason)
      const dropped = out.drops.length
      const lines = joinQueuedLines(out, project.id)
      try {
        await deps.queue.publish(lines)
      } catch (err) {
        if (err instanceof MessageTooLargeError) {
          // Sending it again cannot help (PostHog's capture answers its sink's "message too large"
          // with 413 too): refused whole, nothing of the request queued.
          deps.counters.add('refused', 'event_too_large', lines.length)
          throw new AppError('payload_too_large', `An event of the request is ${err.bytes} bytes once queued, more than the event queue takes (${err.limitBytes} bytes: the NATS server's max_payload); nothing of it was stored.`, null, { limit: 'max_payload' })
        }
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

function requestBytes(req: CaptureRequest): number {
  const data = req.body.query?.data
  return (req.body.body?.length ?? 0) + (typeof data === 'string' ? data.length : 0)
}
