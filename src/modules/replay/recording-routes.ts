import type { FastifyInstance, FastifyRequest } from 'fastify'
import { addRoute } from '../../http/route-paths.ts'
import { validationError } from '../../shared/errors.ts'
import type { Project } from '../projects/project-types.ts'
import { readRecordingListQuery } from './recording-list-schemas.ts'
import type { RecordingService } from './recording-service.ts'
import type { RecordingMeta } from './recording-store.ts'

/** The person beside a recording, as the routes are given it (PostHog's minimal person JSON), or null. */
export type PersonLookup = (project: Project, uuid: string) => Promise<Record<string, unknown> | null>

const DAY_MS = 86_400_000

/** A recording as PostHog's SessionRecordingSerializer returns it (the fields its clients read). */
export function toRecordingJson(m: RecordingMeta, person: Record<string, unknown> | null, retentionDays: number) {
  const expiry = new Date(m.endTime.getTime() + retentionDays * DAY_MS)
  return {
    id: m.sessionId,
    distinct_id: m.distinctId,
    viewed: false,
    viewers: [],
    recording_duration: m.durationSeconds,
    active_seconds: m.activeSeconds,
    inactive_seconds: Math.max(0, m.durationSeconds - m.activeSeconds),
    start_time: m.startTime.toISOString(),
    end_time: m.endTime.toISOString(),
    click_count: m.clickCount,
    keypress_count: m.keypressCount,
    mouse_activity_count: m.mouseActivityCount,
    console_log_count: m.consoleLogCount,
    console_warn_count: m.consoleWarnCount,
    console_error_count: m.consoleErrorCount,
    start_url: m.firstUrl,
    person,
    storage: 'object_storage',
    snapshot_source: 'web',
    ongoing: false,
    retention_period_days: retentionDays,
    expiry_time: expiry.toISOString(),
    recording_ttl: Math.max(0, Math.ceil((expiry.getTime() - Date.now()) / DAY_MS)),
  }
}

function blobKey(q: Record<string, unknown>, key: string): number | null {
  const raw = q[key]
  if (raw === undefined) return null
  if (typeof raw !== 'string' || !/^\d{1,6}$/.test(raw)) throw validationError(key, 'Must be a block number.', 'invalid')
  return Number(raw)
}

/**
 * PostHog's session_recordings API: the list (`results`, `has_next`), one recording with its person,
 * its snapshots (no `source`: the `blob_v2` sources; `source=blob_v2` with `blob_key` or
 * `start_blob_key`/`end_blob_key`: those blocks as JSON lines `[windowId, event]`), and DELETE.
 */
export async function recordingRoutes(app: FastifyInstance, opts: { recordings: RecordingService; person: PersonLookup }) {
  const base = '/api/projects/:project_id/session_recordings/'
  const sessionId = (req: FastifyRequest) => (req.params as { session_id: string }).session_id
  const personOf = async (project: Project, m: RecordingMeta) => (m.personUuid ? opts.person(project, m.personUuid) : null)

  addRoute(app, 'GET', base, async (req) => {
    const { filter, events } = readRecordingListQuery(req.query as Record<string, unknown>, new Date(), req.project.timezone || 'UTC')
    const page = await opts.recordings.list(req.project, filter, events)
    const retention = req.project.sessionRecording.retentionDays
    const results = await Promise.all(page.results.map(async (m) => toRecordingJson(m, await personOf(req.project, m), retention)))
    return { results, has_next: page.hasNext, version: 3 }
  })
  addRoute(app, 'GET', `${base}:session_id/`, async (req) => {
    const m = await opts.recordings.get(req.project, sessionId(req))
    return toRecordingJson(m, await personOf(req.project, m), req.project.sessionRecording.retentionDays)
  })
  addRoute(app, 'DELETE', `${base}:session_id/`, async (req, reply) => {
    await opts.recordings.delete(req.project, sessionId(req))
    return reply.code(204).send()
  })
  addRoute(app, 'GET', `${base}:session_id/snapshots/`, async (req, reply) => {
    const q = req.query as Record<string, unknown>
    if (q.source === undefined) {
      const blocks = await opts.recordings.sources(req.project, sessionId(req))
      return {
        sources: blocks.map((b, i) => ({
          source: 'blob_v2',
          start_timestamp: b.startTime.toISOString(),
          end_timestamp: b.endTime.toISOString(),
          blob_key: String(i),
        })),
      }
    }
    if (q.source !== 'blob_v2') throw validationError('source', `"${String(q.source)}" is not a valid choice.`, 'invalid_choice')
    const single = blobKey(q, 'blob_key')
    const start = single ?? blobKey(q, 'start_blob_key')
    const end = single ?? blobKey(q, 'end_blob_key') ?? start
    if (start === null || end === null) throw validationError('blob_key', 'Must name a block: blob_key, or start_blob_key and end_blob_key.', 'required')
    const lines = await opts.recordings.blockLines(req.project, sessionId(req), start, end)
    return reply.type('application/jsonl; charset=utf-8').send(lines)
  })
}
