import type { FastifyInstance } from 'fastify'
import { has, readBody, readInt, readList } from '../../http/drf-fields.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import { addRoute } from '../../http/route-paths.ts'
import type { DeadLetterStore, StoredDeadLetter } from '../../ingestion/dead-letter-store.ts'
import { replayDeadLetters } from '../../ingestion/replay-dead-letters.ts'
import type { EventQueue } from '../../queue/event-queue.ts'
import { AppError, validationError } from '../../shared/errors.ts'

/** PostHog's OrganizationMembership.Level.ADMIN: replaying dead letters is for admins and owners. */
const ADMIN_LEVEL = 8
/** Ids one replay may name (100,000 took 16 s); a replay of every pending letter names none. */
const MAX_REPLAY_IDS = 10_000

/** A dead letter on the wire (Tally's own resource: PostHog keeps its dead letters in Kafka). */
export function toDeadLetterJson(l: StoredDeadLetter) {
  return {
    id: l.id,
    uuid: l.uuid,
    failed_at: l.failedAt.toISOString(),
    step: l.step,
    reason: l.reason,
    error: l.error,
    payload: l.payload,
    replayed_at: l.replayedAt?.toISOString() ?? null,
  }
}

/**
 * `/api/projects/:project_id/dead_letters/`: the project's events the pipeline could not process
 * (`?pending=true` for those not replayed yet), and `POST .../replay/` (`{"ids": [...]}`, or every
 * pending letter of the project) to put them back on the queue (admins and owners only).
 */
export async function deadLetterRoutes(app: FastifyInstance, opts: {
  deadLetters: DeadLetterStore
  queue: Pick<EventQueue, 'publish'>
  /** The user's level in the project (null: not a member). */
  memberLevel: (projectId: number, userId: number) => Promise<number | null>
}) {
  const base = '/api/projects/:project_id/dead_letters/'
  addRoute(app, 'GET', base, async (req) => {
    const page = readPage(req)
    const pendingOnly = (req.query as Record<string, unknown>).pending === 'true'
    const { count, rows } = await opts.deadLetters.list({ projectId: req.project.id, pendingOnly, ...page })
    return paginate(req, page, count, rows.map(toDeadLetterJson))
  })
  addRoute(app, 'POST', `${base}replay/`, async (req) => {
    if (((await opts.memberLevel(req.project.id, req.user.id)) ?? 0) < ADMIN_LEVEL) {
      throw new AppError('permission_denied', 'Only admins and owners of the project can replay dead letters.')
    }
    const body = readBody(req.body)
    const list = has(body, 'ids') ? readList(body.ids, 'ids') : undefined
    if (list && list.length > MAX_REPLAY_IDS) throw validationError('ids', `At most ${MAX_REPLAY_IDS} ids per replay, got ${list.length}: replay in parts, or send no ids to replay every pending letter.`, 'max_length')
    // ClickHouse's ids are random below 2^53 (its dead-letter store): any safe integer.
    const ids = list?.map((id, i) => readInt(id, `ids__${i}`, { min: 1, max: Number.MAX_SAFE_INTEGER })!)
    return replayDeadLetters({ deadLetters: opts.deadLetters, queue: opts.queue }, { projectId: req.project.id, ids })
  })
}
