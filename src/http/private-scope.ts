import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../shared/errors.ts'
import type { ProjectService } from '../modules/projects/project-service.ts'
import type { Project, User } from '../modules/projects/project-types.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The user authenticated by personal API key (private scope only). */
    user: User
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

/**
 * Authenticates every request of the scope by personal API key and resolves `:project_id`
 * to a project the user is a member of.
 */
export function installPrivateAuth(app: FastifyInstance, projects: ProjectService): void {
  app.decorateRequest('user', null as unknown as User)
  app.decorateRequest('project', null as unknown as Project)
  app.addHook('preHandler', async (req) => {
    req.user = await authenticatePersonal(req, projects)
    const projectId = (req.params as Record<string, string> | undefined)?.project_id
    if (projectId !== undefined) req.project = await projects.resolveProjectOfUser(req.user, projectId)
  })
}
