import type { FastifyInstance, FastifyRequest } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import { AppError } from '../shared/errors.ts'
import type { AuthService } from '../modules/auth/auth-service.ts'
import { checkCsrf, sessionTokenOf, setSessionCookies, STATE_CHANGING } from '../modules/auth/session-cookies.ts'
import type { ProjectService } from '../modules/projects/project-service.ts'
import type { Project, User } from '../modules/projects/project-types.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The user authenticated by session cookie or personal API key (private scope only). */
    user: User
    /** How `user` was authenticated. */
    authMethod: 'session' | 'personal_api_key'
    /** The project named by `:project_id`, checked for membership (private scope only). */
    project: Project
  }
}

const BEARER = /^Bearer\s+(\S.+)$/

/** Where PostHog finds a personal API key: Authorization header, then body, then query string. */
export function findPersonalKey(req: FastifyRequest): { key: string; where: string } | null {
  const header = req.headers.authorization
  const m = typeof header === 'string' ? BEARER.exec(header) : null
  if (m && !m[1].startsWith('pha_')) return { key: m[1].trim(), where: 'Authorization header' }
  const body = req.body as Record<string, unknown> | undefined
  if (body && typeof body === 'object' && typeof body.personal_api_key === 'string') {
    return { key: body.personal_api_key, where: 'request body' }
  }
  const q = req.query as Record<string, unknown> | undefined
  if (q && typeof q.personal_api_key === 'string') return { key: q.personal_api_key, where: 'query string' }
  return null
}

/**
 * The user of the request's personal API key. No key: `not_authenticated`; an unknown key:
 * `invalid_personal_api_key`. Any other failure (the store does not answer) is passed on as it is,
 * so an outage is never reported as a bad key.
 */
export async function authenticatePersonal(req: FastifyRequest, projects: ProjectService): Promise<User> {
  const found = findPersonalKey(req)
  if (!found) throw new AppError('not_authenticated', 'Authentication credentials were not provided.')
  try {
    return await projects.authenticatePersonalKey(found.key)
  } catch (err) {
    if (err instanceof AppError && err.code === 'invalid_personal_api_key') {
      throw new AppError('invalid_personal_api_key', `Personal API key found in ${found.where} is invalid.`)
    }
    throw err
  }
}

// Project settings: writes need an organization admin or owner (members read them).
const ADMIN_ONLY_WRITES = new Set(['/api/projects/:project_id/', '/api/projects/:project_id'])

/**
 * Authenticates every request of the scope, as PostHog's private API does: by the session cookie
 * (a state-changing request then needs the CSRF token, see session-cookies.ts), or by personal API
 * key. A request with an `Authorization` header (or a `personal_api_key` query parameter) is never
 * taken as the session's, so API clients are exempt from CSRF and a browser's cookie cannot stand
 * in for a wrong key (a key in the body is read only without a valid session: bodies are parsed later). The session is read
 * on `onRequest`, before the body is parsed, so a forged cross-site form is refused as such (403)
 * whatever its content type. Then `:project_id` is resolved to a project the user is a member of.
 */
export async function installPrivateAuth(app: FastifyInstance, projects: ProjectService, auth: AuthService): Promise<void> {
  await app.register(fastifyCookie)
  app.decorateRequest('user', null as unknown as User)
  app.decorateRequest('project', null as unknown as Project)
  app.decorateRequest('authMethod', null as unknown as 'session')
  app.addHook('onRequest', async (req, reply) => {
    // PostHog tries the personal key first: a request that names one is not the session's.
    const namesKey = req.headers.authorization !== undefined || typeof (req.query as Record<string, unknown>)?.personal_api_key === 'string'
    const token = namesKey ? null : sessionTokenOf(req)
    if (token === null) return
    const session = await auth.authenticateSession(token)
    if (!session) return
    if (STATE_CHANGING.has(req.method)) checkCsrf(req, token)
    req.user = session.user
    req.authMethod = 'session'
    if (session.extended) setSessionCookies(req, reply, { token, maxAgeSeconds: Math.floor(auth.settings.sessionTtlMs / 1000) })
  })
  app.addHook('preHandler', async (req) => {
    if (!req.user) {
      req.user = await authenticatePersonal(req, projects)
      req.authMethod = 'personal_api_key'
    }
    const projectId = (req.params as Record<string, string> | undefined)?.project_id
    if (projectId !== undefined) req.project = await projects.resolveProjectOfUser(req.user, projectId)
    if (req.method !== 'GET' && req.method !== 'HEAD' && ADMIN_ONLY_WRITES.has(req.routeOptions.url ?? '')) await auth.requireAdmin(req.user)
  })
}
