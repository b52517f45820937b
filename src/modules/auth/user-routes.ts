import type { FastifyInstance } from 'fastify'
import { pathId, readBody } from '../../http/drf-fields.ts'
import { addRoute } from '../../http/route-paths.ts'
import { AppError } from '../../shared/errors.ts'
import type { Project, User } from '../projects/project-types.ts'
import { toProjectJson } from '../projects/project-routes.ts'
import type { ProjectService } from '../projects/project-service.ts'
import type { AuthService } from './auth-service.ts'
import { parseMePatch, parsePersonalKey } from './auth-schemas.ts'
import type { Membership, PersonalKey } from './auth-types.ts'
import type { MemberService } from './member-service.ts'
import { sessionTokenOf, setSessionCookies } from './session-cookies.ts'

function toOrganizationJson(m: Membership) {
  return { id: m.organizationUuid, name: m.organizationName, slug: null, membership_level: m.level }
}

function toTeamJson(p: Project) {
  return { id: p.id, uuid: p.uuid, organization: p.organizationUuid, project_id: p.id, api_token: p.apiToken, name: p.name, timezone: p.timezone }
}

/** The signed-in user as PostHog's UserSerializer shows them (`GET /api/users/@me/`). */
export function toMeJson(user: User, d: { membership: Membership; team: Project | null; hasPassword: boolean }) {
  return {
    id: user.id,
    uuid: user.uuid,
    distinct_id: user.distinctId,
    first_name: user.firstName,
    last_name: user.lastName,
    email: user.email,
    pending_email: null,
    is_email_verified: user.isEmailVerified,
    has_password: d.hasPassword,
    is_staff: false,
    is_impersonated: false,
    organization: toOrganizationJson(d.membership),
    organizations: [toOrganizationJson(d.membership)],
    team: d.team ? toTeamJson(d.team) : null,
  }
}

export function toPersonalKeyJson(k: PersonalKey) {
  return {
    id: k.id,
    label: k.label,
    mask_value: k.maskValue,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    scopes: ['*'],
  }
}

/**
 * The signed-in user (`/api/users/@me/`), their personal API keys, and the project API key's
 * rotation (private scope: session or personal key).
 */
export async function userRoutes(app: FastifyInstance, opts: { auth: AuthService; members: MemberService; projects: ProjectService }) {
  const { auth, members, projects } = opts

  addRoute(app, 'GET', '/api/users/@me/', async (req) => toMeJson(req.user, await auth.describe(req.user)))
  addRoute(app, 'PATCH', '/api/users/@me/', async (req, reply) => {
    const input = parseMePatch(readBody(req.body))
    if (input.password !== undefined) {
      await auth.changePassword(req.user, { currentPassword: input.currentPassword, password: input.password })
      // Every session ended with the change; the one making it continues under a new token.
      if (req.authMethod === 'session' && sessionTokenOf(req) !== null) setSessionCookies(req, reply, await auth.openSession(req.user))
    }
    const user = input.firstName === undefined ? req.user : await auth.rename(req.user, input.firstName)
    return toMeJson(user, await auth.describe(user))
  })

  addRoute(app, 'GET', '/api/personal_api_keys/', async (req) => (await members.listKeys(req.user)).map(toPersonalKeyJson))
  addRoute(app, 'POST', '/api/personal_api_keys/', async (req, reply) => {
    const { key, value } = await members.createKey(req.user, parsePersonalKey(readBody(req.body)).label)
    return reply.code(201).send({ ...toPersonalKeyJson(key), value })
  })
  addRoute(app, 'GET', '/api/personal_api_keys/:id/', async (req) => {
    const key = (await members.listKeys(req.user)).find((k) => k.id === pathId(req))
    if (!key) throw new AppError('not_found', 'Not found.')
    return toPersonalKeyJson(key)
  })
  addRoute(app, 'DELETE', '/api/personal_api_keys/:id/', async (req, reply) => {
    await members.deleteKey(req.user, pathId(req))
    return reply.code(204).send()
  })

  // PostHog's `PATCH /api/projects/:id/reset_token/`: owners and admins only.
  addRoute(app, 'PATCH', '/api/projects/:project_id/reset_token/', async (req) => {
    const { level } = await auth.requireAdmin(req.user)
    return toProjectJson(await projects.resetApiToken(req.project), level)
  })
}
