import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { createLogger } from '../../src/shared/logger.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { browserOf, OWNER_PASSWORD, setUpOwner, signIn } from '../helpers/sessions.ts'

const EMAIL = 'owner@example.com'

function login(app: TestApp, payload: unknown, extra: { headers?: Record<string, string>; remoteAddress?: string } = {}) {
  return app.http.inject({ method: 'POST', url: '/api/login/', payload: payload as object, ...extra })
}

const me = (app: TestApp, headers: Record<string, string>) => app.http.inject({ method: 'GET', url: '/api/users/@me/', headers })

test('auth: sign-in sets an HttpOnly, SameSite=Lax session cookie and a readable CSRF cookie; /api/users/@me/ answers with it', async (t) => {
  const app = await buildTestApp(t)
  await setUpOwner(app)
  const res = await login(app, { email: 'Owner@Example.com', password: OWNER_PASSWORD })
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual(res.json(), { success: true })
  const session = res.cookies.find((c) => c.name === 'tally_session')!
  const csrf = res.cookies.find((c) => c.name === 'tally_csrftoken')!
  assert.equal(session.httpOnly, true)
  assert.equal(session.sameSite, 'Lax')
  assert.equal(session.path, '/')
  assert.equal(session.secure, undefined, 'plain HTTP: no Secure flag')
  assert.equal(session.maxAge, 14 * 24 * 3600)
  assert.match(session.value, /^[A-Za-z0-9_-]{43}$/, '256 random bits')
  assert.equal(csrf.httpOnly, undefined, 'the web app must read the CSRF cookie')
  assert.equal(csrf.sameSite, 'Lax')
  assert.notEqual(csrf.value, session.value)

  const m = await me(app, { cookie: browserOf(res).cookie })
  assert.equal(m.statusCode, 200, m.body)
  const body = m.json()
  assert.equal(body.email, EMAIL)
  assert.equal(body.first_name, 'Olive')
  assert.equal(body.is_staff, false)
  assert.equal(body.has_password, true)
  assert.equal(body.organization.name, 'Default organization')
  assert.equal(body.organization.membership_level, 15)
  assert.deepEqual(body.organizations, [body.organization])
  assert.equal(body.team.id, app.projectId)
  assert.equal(body.team.api_token, app.projectKey)
  assert.equal(body.team.timezone, 'UTC')
  assert.equal(typeof body.uuid, 'string')
})

test('auth: /api/users/@me/ with a personal API key, and 401 not_authenticated without credentials or with a stale cookie', async (t) => {
  const app = await buildTestApp(t)
  const byKey = await me(app, app.auth)
  assert.equal(byKey.statusCode, 200)
  assert.equal(byKey.json().email, 'owner@tally.local')
  assert.equal(byKey.json().has_password, false, 'the bootstrap owner has no password before set-up')
  for (const headers of [{}, { cookie: 'tally_session=not-a-session' }] as Array<Record<string, string>>) {
    const res = await me(app, headers)
    assert.equal(res.statusCode, 401)
    assert.equal(res.json().type, 'authentication_error')
    assert.equal(res.json().code, 'not_authenticated')
  }
})

test('auth: the Secure flag is set over HTTPS as a trusted proxy reports it, and not for a forged header', async (t) => {
  const trusting = await buildTestApp(t, { env: { TALLY_TRUSTED_PROXIES: '127.0.0.1' } })
  await setUpOwner(trusting)
  const viaProxy = await login(trusting, { email: EMAIL, password: OWNER_PASSWORD }, { headers: { 'x-forwarded-proto': 'https' } })
  assert.equal(viaProxy.statusCode, 200)
  for (const c of viaProxy.cookies) assert.equal(c.secure, true, c.name)

  const plain = await buildTestApp(t)
  await setUpOwner(plain)
  const forged = await login(plain, { email: EMAIL, password: OWNER_PASSWORD }, { headers: { 'x-forwarded-proto': 'https' } })
  assert.equal(forged.statusCode, 200)
  for (const c of forged.cookies) assert.equal(c.secure, undefined, c.name)
})

test('auth: a wrong password and an unknown e-mail are the same 400 invalid_credentials, and set no cookie', async (t) => {
  const app = await buildTestApp(t)
  await setUpOwner(app)
  for (const payload of [
    { email: EMAIL, password: 'wrong password' },
    { email: 'nobody@example.com', password: OWNER_PASSWORD },
    { email: 'owner@tally.local', password: OWNER_PASSWORD },
  ]) {
    const res = await login(app, payload)
    assert.equal(res.statusCode, 400)
    assert.deepEqual(res.json(), { type: 'validation_error', code: 'invalid_credentials', detail: 'Invalid email or password.', attr: null })
    assert.equal(res.cookies.length, 0)
  }
})

test('auth: sign-in fields are validated in PostHog\'s shape', async (t) => {
  const app = await buildTestApp(t)
  const missing = await login(app, { email: EMAIL })
  assert.equal(missing.statusCode, 400)
  assert.equal(missing.json().code, 'required')
  assert.equal(missing.json().attr, 'password')
  const wrongType = await login(app, { email: ['a'], password: 'x' })
  assert.equal(wrongType.json().attr, 'email')
  const form = await app.http.inject({ method: 'POST', url: '/api/login/', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'email=a&password=b' })
  assert.equal(form.statusCode, 415)
})

test('auth: failed sign-ins are limited per e-mail (429 throttled with Retry-After, even for the right password) and per address', async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_LOGIN_MAX_FAILURES: '3', TALLY_LOGIN_WINDOW_SECONDS: '600' } })
  await setUpOwner(app)
  for (let i = 0; i < 3; i++) {
    const res = await login(app, { email: EMAIL, password: `guess ${i}!` }, { remoteAddress: `10.0.0.${i + 1}` })
    assert.equal(res.statusCode, 400)
  }
  const blocked = await login(app, { email: EMAIL, password: OWNER_PASSWORD }, { remoteAddress: '10.0.0.9' })
  assert.equal(blocked.statusCode, 429)
  assert.equal(blocked.json().type, 'throttled_error')
  assert.equal(blocked.json().code, 'throttled')
  const retryAfter = Number(blocked.headers['retry-after'])
  assert.ok(retryAfter > 0 && retryAfter <= 600, `Retry-After ${blocked.headers['retry-after']}`)
  assert.equal(blocked.cookies.length, 0)

  // Per address: one client guessing across many e-mails is stopped too; another client is not.
  for (let i = 0; i < 3; i++) assert.equal((await login(app, { email: `u${i}@example.com`, password: 'x' }, { remoteAddress: '10.1.1.1' })).statusCode, 400)
  assert.equal((await login(app, { email: 'u9@example.com', password: 'x' }, { remoteAddress: '10.1.1.1' })).statusCode, 429)
  assert.equal((await login(app, { email: 'u9@example.com', password: 'x' }, { remoteAddress: '10.1.1.2' })).statusCode, 400)
})

test('auth: logout deletes the session server side (the old cookie no longer works) and clears both cookies', async (t) => {
  const app = await buildTestApp(t)
  const browser = await setUpOwner(app)
  const res = await app.http.inject({ method: 'POST', url: '/api/logout/', headers: browser.headers })
  assert.equal(res.statusCode, 204)
  const cleared = Object.fromEntries(res.cookies.map((c) => [c.name, c]))
  assert.equal(cleared.tally_session.value, '')
  assert.equal(cleared.tally_session.maxAge, 0)
  assert.equal(cleared.tally_csrftoken.maxAge, 0)
  assert.equal((await me(app, { cookie: browser.cookie })).statusCode, 401, 'a copy of the cookie is dead')
  // Logging out with a session needs the CSRF token like any other state change.
  const other = await signIn(app, EMAIL, OWNER_PASSWORD)
  const forged = await app.http.inject({ method: 'POST', url: '/api/logout/', headers: { cookie: other.cookie } })
  assert.equal(forged.statusCode, 403)
  assert.equal((await me(app, { cookie: other.cookie })).statusCode, 200)
})

test('auth: the session is accepted by the private API (reads, and writes with the CSRF token)', async (t) => {
  const app = await buildTestApp(t)
  const browser = await setUpOwner(app)
  const list = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/actions/`, headers: { cookie: browser.cookie } })
  assert.equal(list.statusCode, 200)
  const created = await app.http.inject({
    method: 'POST',
    url: `/api/projects/@current/actions/`,
    headers: browser.headers,
    payload: { name: 'Signed up', steps: [{ event: 'signup' }] },
  })
  assert.equal(created.statusCode, 201, created.body)
  assert.equal(created.json().created_by.email, EMAIL)
  const projects = await app.http.inject({ method: 'GET', url: '/api/projects/', headers: { cookie: browser.cookie } })
  assert.deepEqual(projects.json().results.map((p: { id: number }) => p.id), [app.projectId])
})

test('auth: changing the password ends every session; the one that changed it continues with a new cookie', async (t) => {
  const app = await buildTestApp(t)
  const first = await setUpOwner(app)
  const second = await signIn(app, EMAIL, OWNER_PASSWORD)
  const wrong = await app.http.inject({ method: 'PATCH', url: '/api/users/@me/', headers: first.headers, payload: { current_password: 'nope nope', password: 'a new password' } })
  assert.equal(wrong.statusCode, 400)
  assert.equal(wrong.json().attr, 'current_password')
  const short = await app.http.inject({ method: 'PATCH', url: '/api/users/@me/', headers: first.headers, payload: { current_password: OWNER_PASSWORD, password: 'short' } })
  assert.equal(short.statusCode, 400)
  assert.equal(short.json().attr, 'password')
  const res = await app.http.inject({ method: 'PATCH', url: '/api/users/@me/', headers: first.headers, payload: { current_password: OWNER_PASSWORD, password: 'a new password' } })
  assert.equal(res.statusCode, 200, res.body)
  assert.equal((await me(app, { cookie: first.cookie })).statusCode, 401)
  assert.equal((await me(app, { cookie: second.cookie })).statusCode, 401)
  assert.equal((await me(app, { cookie: browserOf(res).cookie })).statusCode, 200)
  assert.equal((await login(app, { email: EMAIL, password: OWNER_PASSWORD })).statusCode, 400)
  assert.equal((await login(app, { email: EMAIL, password: 'a new password' })).statusCode, 200)
})

test('auth: passwords, session cookies and one-time link tokens never reach the log', async (t) => {
  let text = ''
  const sink = new Writable({ write: (chunk, _enc, done) => ((text += chunk.toString()), done()) })
  const app = await buildTestApp(t, { logger: createLogger({ level: 'debug', pretty: false, destination: sink }) })
  const setupToken = await app.services.auth.createSetupToken()
  assert.equal((await app.http.inject({ method: 'GET', url: `/api/setup/?token=${setupToken}` })).json().valid, true)
  const owner = browserOf(await app.http.inject({ method: 'POST', url: '/api/setup/', payload: { token: setupToken, email: EMAIL, password: OWNER_PASSWORD, first_name: 'O' } }))
  const invite = await app.http.inject({ method: 'POST', url: '/api/organizations/@current/invites/', headers: owner.headers, payload: { target_email: 'm@example.com' } })
  const inviteToken = new URL(invite.json().invite_url).searchParams.get('invite')!
  await app.http.inject({ method: 'GET', url: `/api/signup/invite/?token=${inviteToken}` })
  await login(app, { email: EMAIL, password: 'a wrong password' })
  await me(app, { cookie: owner.cookie })
  const requests = text.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.msg === 'request')
  assert.ok(requests.some((l) => l.url === '/api/setup/?token=[redacted]'), JSON.stringify(requests.map((l) => l.url)))
  assert.ok(requests.some((l) => l.url === '/api/signup/invite/?token=[redacted]'))
  for (const secret of [setupToken, inviteToken, OWNER_PASSWORD, 'a wrong password', owner.sessionToken, owner.csrfToken]) {
    assert.ok(!text.includes(secret), `the log contains ${secret}`)
  }
})
