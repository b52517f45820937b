import type { FastifyInstance } from 'fastify'
import { readBody } from '../../http/drf-fields.ts'
import { paginate, readPage } from '../../http/pagination.ts'
import { addRoute } from '../../http/route-paths.ts'
import { AppError } from '../../shared/errors.ts'
import { toUserSummary } from '../projects/project-types.ts'
import { parseInvite, parseMemberLevel } from './auth-schemas.ts'
import type { Invite, Member } from './auth-types.ts'
import type { MemberService } from './member-service.ts'

export function toMemberJson(m: Member) {
  return {
    id: m.id,
    user: toUserSummary(m.user),
    level: m.level,
    joined_at: m.joinedAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
  }
}

export function toInviteJson(i: Invite, now: number, inviteUrl?: string) {
  return {
    id: i.id,
    target_email: i.targetEmail,
    level: i.level,
    first_name: '',
    is_expired: i.expiresAt.getTime() <= now,
    created_by: i.createdBy ? toUserSummary(i.createdBy) : null,
    created_at: i.createdAt.toISOString(),
    expires_at: i.expiresAt.toISOString(),
    ...(inviteUrl !== undefined && { invite_url: inviteUrl }),
  }
}

/** `@current` is the only organization a user has; any other id is not theirs. */
function checkOrganization(params: unknown): void {
  if ((params as Record<string, string>).organization_id !== '@current') throw new AppError('not_found', 'Not found.')
}

/** `/api/organizations/@current/members/` and `/invites/` (private scope). */
export async function memberRoutes(app: FastifyInstance, opts: { members: MemberService }) {
  const { members } = opts
  const base = '/api/organizations/:organization_id'

  addRoute(app, 'GET', `${base}/members/`, async (req) => {
    checkOrganization(req.params)
    const page = readPage(req)
    const { count, rows } = await members.listMembers(req.user, page)
    return paginate(req, page, count, rows.map(toMemberJson))
  })
  addRoute(app, 'PATCH', `${base}/members/:user_uuid/`, async (req) => {
    checkOrganization(req.params)
    const level = parseMemberLevel(readBody(req.body))
    return toMemberJson(await members.setLevel(req.user, (req.params as Record<string, string>).user_uuid, level))
  })
  addRoute(app, 'DELETE', `${base}/members/:user_uuid/`, async (req, reply) => {
    checkOrganization(req.params)
    await members.remove(req.user, (req.params as Record<string, string>).user_uuid)
    return reply.code(204).send()
  })

  addRoute(app, 'GET', `${base}/invites/`, async (req) => {
    checkOrganization(req.params)
    const page = readPage(req)
    const { count, rows } = await members.listInvites(req.user, page)
    return paginate(req, page, count, rows.map((i) => toInviteJson(i, Date.now())))
  })
  addRoute(app, 'POST', `${base}/invites/`, async (req, reply) => {
    checkOrganization(req.params)
    const { invite, token } = await members.invite(req.user, parseInvite(readBody(req.body)))
    const url = `${req.protocol}://${req.host}/signup?invite=${encodeURIComponent(token)}`
    return reply.code(201).send(toInviteJson(invite, Date.now(), url))
  })
  addRoute(app, 'DELETE', `${base}/invites/:id/`, async (req, reply) => {
    checkOrganization(req.params)
    await members.deleteInvite(req.user, (req.params as Record<string, string>).id)
    return reply.code(204).send()
  })
}
