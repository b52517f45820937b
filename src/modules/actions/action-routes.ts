import type { FastifyInstance, FastifyReply } from 'fastify'
import { pathId, readBody } from '../../http/drf-fields.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import { addRoute, readFormat, refuseDelete } from '../../http/route-paths.ts'
import { toUserSummary } from '../projects/project-types.ts'
import { toCsv } from './action-csv.ts'
import { parseActionBody } from './action-schemas.ts'
import type { ActionService } from './action-service.ts'
import type { Action, ActionStep } from './action-types.ts'
import type { ActionPeople } from './action-people.ts'
import { readPeopleQuery } from './action-schemas.ts'
import { toPersonJson } from '../persons/person-json.ts'
import { pageLink } from '../persons/person-routes.ts'

/** A step with its fields in the spec's order (JSONB does not keep key order). */
function toStepJson(s: ActionStep) {
  return {
    id: s.id,
    event: s.event,
    tag_name: s.tag_name,
    text: s.text,
    text_matching: s.text_matching,
    href: s.href,
    href_matching: s.href_matching,
    selector: s.selector,
    url: s.url,
    name: s.name,
    url_matching: s.url_matching,
    properties: s.properties,
  }
}

/** An action as PostHog's ActionSerializer shows it, with both the spec's and PostHog's chat field names. */
export function toActionJson(a: Action) {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    tags: a.tags,
    post_to_slack: a.postToChat,
    slack_message_format: a.chatMessageFormat,
    post_to_chat: a.postToChat,
    chat_message_format: a.chatMessageFormat,
    steps: a.steps.map(toStepJson),
    created_at: a.createdAt.toISOString(),
    created_by: a.createdBy ? toUserSummary(a.createdBy) : null,
    deleted: a.deleted,
    is_calculating: a.isCalculating,
    last_calculated_at: a.lastCalculatedAt.toISOString(),
    team_id: a.projectId,
    is_action: true,
    bytecode_error: null,
    pinned_at: a.pinnedAt?.toISOString() ?? null,
    creation_context: null,
  }
}

const FORMATS = ['json', 'csv'] as const
const CSV_EMPTY_HEADER = Object.keys(toActionJson({ createdAt: new Date(0), lastCalculatedAt: new Date(0), steps: [], tags: [] } as unknown as Action))

function sendCsv(reply: FastifyReply, rows: Record<string, unknown>[]) {
  return reply.type('text/csv; charset=utf-8').send(toCsv(rows, CSV_EMPTY_HEADER))
}

/** `/api/projects/:project_id/actions/` (every operation takes `?format=json|csv`); DELETE refused. */
export async function actionRoutes(app: FastifyInstance, opts: { actions: ActionService; people: ActionPeople }) {
  const base = '/api/projects/:project_id/actions/'
  const { actions } = opts

  addRoute(app, 'GET', base, async (req, reply) => {
    const format = readFormat(req, FORMATS)
    const page = readPage(req)
    const { count, rows } = await actions.list(req.project, page)
    if (format === 'csv') return sendCsv(reply, rows.map(toActionJson))
    return paginate(req, page, count, rows.map(toActionJson))
  })
  addRoute(app, 'POST', base, async (req, reply) => {
    readFormat(req, FORMATS)
    const { input, steps } = parseActionBody(readBody(req.body))
    return reply.code(201).send(toActionJson(await actions.create(req.project, req.user, input, steps)))
  })
  addRoute(app, 'GET', `${base}people/`, async (req) => {
    readFormat(req)
    const { actionId, range } = readPeopleQuery(req.query as Record<string, unknown>)
    const page = readPage(req)
    const { persons, missing, hasMore } = await opts.people.people(req.project, actionId, range, page)
    const people = persons.map(toPersonJson)
    return {
      results: [{ people, count: people.length }],
      next: hasMore ? pageLink(req, page.offset + page.limit, page.limit) : null,
      previous: page.offset > 0 ? pageLink(req, Math.max(0, page.offset - page.limit), page.limit) : null,
      missing_persons: missing,
    }
  })
  addRoute(app, 'GET', `${base}:id/`, async (req, reply) => {
    const format = readFormat(req, FORMATS)
    const action = toActionJson(await actions.get(req.project, pathId(req)))
    return format === 'csv' ? sendCsv(reply, [action]) : action
  })
  addRoute(app, 'GET', `${base}:id/count/`, async (req) => {
    readFormat(req, FORMATS)
    return { count: await actions.count(req.project, pathId(req)) }
  })
  addRoute(app, 'PATCH', `${base}:id/`, async (req) => {
    readFormat(req, FORMATS)
    const { input, steps } = parseActionBody(readBody(req.body))
    return toActionJson(await actions.update(req.project, pathId(req), input, steps))
  })
  addRoute(app, 'DELETE', `${base}:id/`, refuseDelete)
}
