import assert from 'node:assert/strict'
import type { TestApp } from './test-app.ts'

/** A signed-in browser: the cookies it sends and the CSRF token its scripts copy into `X-CSRFToken`. */
export interface Browser {
  /** `Cookie` header with both cookies. */
  cookie: string
  sessionToken: string
  csrfToken: string
  /** Headers of a same-origin request from the web app (cookie + CSRF header). */
  headers: Record<string, string>
}

export const OWNER_PASSWORD = 'correct horse battery'

/** Gives the bootstrap owner an e-mail and password through the set-up link, as a first start does. */
export async function setUpOwner(app: TestApp, email = 'owner@example.com', password = OWNER_PASSWORD): Promise<Browser> {
  const token = await app.services.auth.createSetupToken()
  const res = await app.http.inject({ method: 'POST', url: '/api/setup/', payload: { token, email, password, first_name: 'Olive' } })
  assert.equal(res.statusCode, 200, res.body)
  return browserOf(res)
}

/** The session and CSRF cookies a response set. */
export function browserOf(res: { cookies: Array<{ name: string; value: string }> }): Browser {
  const session = res.cookies.find((c) => c.name === 'tally_session')
  const csrf = res.cookies.find((c) => c.name === 'tally_csrftoken')
  assert.ok(session && csrf, `cookies set: ${res.cookies.map((c) => c.name).join(', ')}`)
  const cookie = `tally_session=${session.value}; tally_csrftoken=${csrf.value}`
  return { cookie, sessionToken: session.value, csrfToken: csrf.value, headers: { cookie, 'x-csrftoken': csrf.value } }
}

/** Signs in through `POST /api/login/`. */
export async function signIn(app: TestApp, email: string, password: string): Promise<Browser> {
  const res = await app.http.inject({ method: 'POST', url: '/api/login/', payload: { email, password } })
  assert.equal(res.statusCode, 200, res.body)
  return browserOf(res)
}
