import { createHash } from 'node:crypto'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import { decodeCaptureBody, extractEvents, type CaptureBodyInput, type RawEvent } from '../../domain/events/index.ts'
import { extractSnapshotGroups, type SnapshotGroup } from '../../domain/replay/extract-snapshots.ts'
import { summariseSnapshots } from '../../domain/replay/summarise-snapshots.ts'
import { AppError } from '../../shared/errors.ts'
import { crashPoint } from '../../shared/crash-points.ts'
import { MessageTooLargeError, type EventQueue } from '../../queue/event-queue.ts'
import type { ProjectService } from '../projects/project-service.ts'
import { resolvePublicProject } from '../projects/resolve-public-project.ts'
import type { RecordingBlobStore } from './recording-blob-store.ts'
import { encodeBlock, type RecordingBlock } from './recording-block.ts'

const gzipAsync = promisify(gzip)

export interface RecordingCaptureDeps {
  projects: ProjectService
  blobs: RecordingBlobStore
  /** The recording queue: block summaries waiting for the metadata worker. */
  queue: EventQueue
  /** `Retry-After` (seconds) of the 503 when the blocks or the queue cannot be written (default 5). */
  retryAfterSeconds?: number
}

export interface RecordingCaptureRequest {
  body: CaptureBodyInput
  bearer: string | null
}

/**
 * `/s/`: decodes the body (every encoding capture takes: gzip sniffed or hinted, base64, form,
 * plain JSON), finds the project, and per session appends one block (gzip of `[windowId, event]`
 * lines) to the session's file, then queues the blocks' summaries. Resolves only once both are
 * durable, so a 200 means the snapshots will not be lost; nothing is acknowledged otherwise. A batch
 * sent again (posthog-js retries, or re-sends by beacon on unload, whole batches) is stored again but
 * carries the same content digest, by which the worker keeps it once.
 */
export function createRecordingCaptureService(deps: RecordingCaptureDeps) {
  const unavailable = (err: unknown) =>
    new AppError('service_unavailable', 'Recordings could not be stored right now; retry later.', null, {
      retryAfterSeconds: deps.retryAfterSeconds ?? 5,
      cause: err,
    })

  return {
    async capture(req: RecordingCaptureRequest): Promise<{ sessions: number; snapshots: number }> {
      // Snapshot text stays as sent (posthog-js's gzip parts hold U+0000); what reaches the
      // metadata store (distinct id, URL) is cleaned where it is read.
      const decoded = decodeCaptureBody({ ...req.body, rawStrings: true })
      const extracted = extractEvents({ payload: decoded.payload, form: decoded.form, query: req.body.query, method: req.body.method ?? 'POST' })
      const project = await resolvePublicProject(deps.projects, extracted.token ?? req.bearer)
      const groups = extractSnapshotGroups(extracted.events as (RawEvent & Record<string, unknown>)[])
      const blocks: RecordingBlock[] = []
      let snapshots = 0
      try {
        for (const session of bySession(groups)) {
          snapshots += session.reduce((n, g) => n + g.events.length, 0)
          blocks.push(await storeSession(project.id, session))
        }
      } catch (err) {
        throw unavailable(err)
      }
      if (blocks.length === 0) return { sessions: 0, snapshots: 0 }
      crashPoint('replay.before-publish')
      try {
        await deps.queue.publish(blocks.map(encodeBlock))
      } catch (err) {
        // A summary the queue can never hold: sending it again cannot help.
        if (err instanceof MessageTooLargeError) throw new AppError('payload_too_large', `A recording block's summary is ${err.bytes} bytes, more than the recording queue takes (${err.limitBytes} bytes); nothing of it was stored.`)
        // The blocks stay in their files, referenced by nothing: the SDK sends them again.
        throw unavailable(err)
      }
      return { sessions: blocks.length, snapshots }
    },
  }

  async function storeSession(projectId: number, groups: SnapshotGroup[]): Promise<RecordingBlock> {
    const lines: string[] = []
    for (const g of groups) for (const e of g.events) lines.push(JSON.stringify([g.windowId, e]))
    const summary = summariseSnapshots(groups.flatMap((g) => g.events))
    const text = lines.join('\n') + '\n'
    const digest = createHash('sha256').update(text).digest('base64url')
    const data = await gzipAsync(text, { level: 1 })
    const location = await deps.blobs.appendBlock(projectId, groups[0]!.sessionId, data)
    return { ...location, ...summary, distinctId: groups[0]!.distinctId, windowIds: [...new Set(groups.map((g) => g.windowId))], digest }
  }
}

export type RecordingCaptureService = ReturnType<typeof createRecordingCaptureService>

function bySession(groups: SnapshotGroup[]): SnapshotGroup[][] {
  const out = new Map<string, SnapshotGroup[]>()
  for (const g of groups) {
    const list = out.get(g.sessionId)
    if (list) list.push(g)
    else out.set(g.sessionId, [g])
  }
  return [...out.values()]
}
