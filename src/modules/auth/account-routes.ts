import type { FastifyInstance } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import { readBody } from '../../http/drf-fields.ts'
import { addRoute } from '../../http/route-paths.ts'
import { validationError } from '../../shared/errors.ts'
import type { AuthService, OpenedSession } from './auth-service.ts'
import { parseLogin, parseSetup, parseSignup } from './auth-schemas.ts'
import type { MemberService } from './member-service.ts'
import { checkCsrf, checkOrigin, clearSessionCookies, sessionTokenOf, setSessionCookies } from './session-cookies.ts'
import { toMeJson } from './user-routes.ts'

function queryToken(query: unknown): string {
  const token = (query as Record<string, unknown> | undefined)?.token
  if (typeof token !== 'string' || token === '') throw validationError('token', 'This field is required.', 'required')
  return token
}

/**
 * The routes used without being signed in: sign-in, sign-out, the set-up link and sign-up through
 * an invite. Each state-changing one refuses a foreign `Origin` (no signing a victim's browser into
 * an attacker's account), and each that signs in sets the session and CSRF cookies.
 */
export async function accountRoutes(app: FastifyInstance, opts: { auth: AuthService; members: MemberService }) {
  const { auth, members } = opts
  await app.register(fastifyCookie)

  async function signedIn(req: Parameters<typeof setSessionCookies>[0], reply: Parameters<typeof setSessionCookies>[1], session: OpenedSession) {
    setSessionCookies(req, reply, session)
    return toMeJson(session.user, await auth.describe(session.user))
  }

  addRoute(app, 'POST', '/api/login/', async (req, reply) => {
    checkOrigin(req)
    const session = await auth.login({ ...parseLogin(readBody(req.body)), clientIp: req.ip })
    setSessionCookies(req, reply, session)
    return { success: true }
  })

  addRoute(app, 'POST', '/api/logout/', async (req, reply) => {
    const token = sessionTokenOf(req)
    if (token !== null && (await auth.authenticateSession(token))) {
      checkCsrf(req, token)
      await auth.logout(token)
    }
    clearSessionCookies(req, reply)
    return reply.code(204).send()
  })

  addRoute(app, 'GET', '/api/setup/', async (req) => ({ valid: await auth.isSetupTokenValid(queryToken(req.query)) }))
  addRoute(app, 'POST', '/api/setup/', async (req, reply) => {
    checkOrigin(req)
    return signedIn(req, reply, await auth.completeSetup(parseSetup(readBody(req.body))))
  })

  addRoute(app, 'GET', '/api/signup/invite/', async (req) => {
    const invite = await members.findInvite(queryToken(req.query))
    return invite
      ? { valid: true, target_email: invite.targetEmail, organization_name: invite.organizationName, level: invite.level }
      : { valid: false, target_email: null, organization_name: null }
  })
  addRoute(app, 'POST', '/api/signup/', async (req, reply) => {
    checkOrigin(req)
    const user = await members.signUp(parseSignup(readBody(req.body)))
    return reply.code(201).send(await signedIn(req, reply, await auth.openSession(user)))
  })
}
