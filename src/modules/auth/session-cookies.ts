import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../shared/errors.ts'
import { csrfTokenFor, sameSecret, type OpenedSession } from './auth-service.ts'

export const SESSION_COOKIE = 'tally_session'
export const CSRF_COOKIE = 'tally_csrftoken'
export const CSRF_HEADER = 'x-csrftoken'

/** Methods that change state: with a session they need the CSRF token (Django's "unsafe" methods). */
export const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * HTTPS as the client sees it: TLS here, or `X-Forwarded-Proto: https` from a trusted proxy
 * (Fastify's `trustProxy` makes `req.protocol` honour it only for those addresses).
 */
function isHttps(req: FastifyRequest): boolean {
  return req.protocol === 'https'
}

/**
 * The session cookie (HttpOnly: scripts cannot read it) and the CSRF cookie (readable: the web app
 * copies it into `X-CSRFToken`), both `SameSite=Lax`, `Path=/`, `Secure` over HTTPS.
 */
export function setSessionCookies(req: FastifyRequest, reply: FastifyReply, session: Pick<OpenedSession, 'token' | 'maxAgeSeconds'>): void {
  const common = { path: '/', sameSite: 'lax' as const, secure: isHttps(req), maxAge: session.maxAgeSeconds }
  reply.setCookie(SESSION_COOKIE, session.token, { ...common, httpOnly: true })
  reply.setCookie(CSRF_COOKIE, csrfTokenFor(session.token), { ...common, httpOnly: false })
}

export function clearSessionCookies(req: FastifyRequest, reply: FastifyReply): void {
  const common = { path: '/', sameSite: 'lax' as const, secure: isHttps(req) }
  reply.clearCookie(SESSION_COOKIE, { ...common, httpOnly: true })
  reply.clearCookie(CSRF_COOKIE, { ...common, httpOnly: false })
}

/** The session token of the request's cookie, if any. */
export function sessionTokenOf(req: FastifyRequest): string | null {
  const token = req.cookies?.[SESSION_COOKIE]
  return typeof token === 'string' && token !== '' ? token : null
}

const CSRF_FAILED = 'CSRF Failed: the request must come from Tally itself and carry the X-CSRFToken header.'

/** The origin of a URL as browsers serialise it (lower case, default port dropped), or null. */
function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin
    return origin === 'null' ? null : origin
  } catch {
    return null
  }
}

/**
 * `csrf_failed` when the request carries an `Origin` that is not this server's own: its scheme and
 * `Host` as the client used them (through a trusted proxy: `X-Forwarded-Proto`/`-Host`).
 */
export function checkOrigin(req: FastifyRequest): void {
  const origin = req.headers.origin
  if (origin === undefined) return
  const own = originOf(`${req.protocol}://${req.host}`)
  if (own === null || originOf(origin) !== own) {
    throw new AppError('csrf_failed', `${CSRF_FAILED} Origin ${JSON.stringify(origin)} is not this server's.`)
  }
}

/**
 * Double-submit check of a state-changing request made with a session: `X-CSRFToken` equal to the
 * `tally_csrftoken` cookie and to the session's own CSRF token (constant-time), and a foreign
 * `Origin` refused. A cross-site form can send the cookies but neither read them nor set the header.
 */
export function checkCsrf(req: FastifyRequest, sessionToken: string): void {
  checkOrigin(req)
  const header = req.headers[CSRF_HEADER]
  const cookie = req.cookies?.[CSRF_COOKIE]
  const expected = csrfTokenFor(sessionToken)
  if (typeof header !== 'string' || typeof cookie !== 'string' || !sameSecret(header, cookie) || !sameSecret(header, expected)) {
    throw new AppError('csrf_failed', CSRF_FAILED)
  }
}
