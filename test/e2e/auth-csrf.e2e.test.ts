import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { OWNER_PASSWORD, setUpOwner, type Browser } from '../helpers/sessions.ts'

const CSRF_FAILED = { type: 'authentication_error', code: 'csrf_failed' }

async function actionCount(app: TestApp): Promise<number> {
  const res = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/actions/`, headers: app.auth })
  return res.json().count
}

function postAction(app: TestApp, headers: Record<string, string>, payload: unknown = { name: `a ${Math.random()}`, steps: [{ event: 'x' }] }) {
  return app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/actions/`, headers, payload: payload as object })
}

function assertCsrfRefused(res: { statusCode: number; json(): any; body: string }) {
  assert.equal(res.statusCode, 403, res.body)
  assert.deepEqual({ type: res.json().type, code: res.json().code }, CSRF_FAILED)
}

test('csrf: a cross-site form POST carrying the session cookie is refused and changes nothing', async (t) => {
  const app = await buildTestApp(t)
  const browser = await setUpOwner(app)
  // What a page on evil.example makes the victim's browser send: the cookies, a form body, its own
  // Origin, and no X-CSRFToken (a form cannot set headers or read the victim's cookies).
  const res = await app.http.inject({
    method: 'POST',
    url: `/api/projects/${app.projectId}/actions/`,
    headers: { cookie: browser.cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'name=pwned&steps=x',
  })
  assertCsrfRefused(res)
  // The same form without an Origin header (older browsers, some redirects): still refused.
  const noOrigin = await app.http.inject({
    method: 'POST',
    url: `/api/projects/${app.projectId}/actions/`,
    headers: { cookie: browser.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'name=pwned',
  })
  assertCsrfRefused(noOrigin)
  // Nor can a form rotate the project key or mint a personal key.
  for (const [method, url] of [['PATCH', `/api/projects/${app.projectId}/reset_token/`], ['POST', '/api/personal_api_keys/'], ['DELETE', '/api/personal_api_keys/1/']] as const) {
    assertCsrfRefused(await app.http.inject({ method, url, headers: { cookie: browser.cookie, 'content-type': 'text/plain' }, payload: 'label=x' }))
  }
  assert.equal(await actionCount(app), 0)
  const keys = await app.http.inject({ method: 'GET', url: '/api/personal_api_keys/', headers: app.auth })
  assert.equal(keys.json().length, 1, 'only the bootstrap key')
  assert.equal((await app.http.inject({ method: 'GET', url: '/api/users/@me/', headers: app.auth })).json().team.api_token, app.projectKey)
})

test('csrf: missing, forged and planted tokens are refused; the session\'s own token from the same origin passes', async (t) => {
  const app = await buildTestApp(t)
  const browser: Browser = await setUpOwner(app)
  const planted = 'A'.repeat(43)
  const cases: Array<[string, Record<string, string>]> = [
    ['no header', { cookie: browser.cookie }],
    ['header not equal to the cookie', { cookie: browser.cookie, 'x-csrftoken': planted }],
    // An attacker who can plant cookies (a sibling subdomain) sets both to a value they know: it is
    // not this session's token.
    ['planted cookie and matching header', { cookie: `tally_session=${browser.sessionToken}; tally_csrftoken=${planted}`, 'x-csrftoken': planted }],
    ['the right token from a foreign Origin', { ...browser.headers, origin: 'https://evil.example' }],
    ['the right token from the right host over the wrong scheme', { ...browser.headers, origin: 'https://localhost:80' }],
    ['the right token with Origin null', { ...browser.headers, origin: 'null' }],
  ]
  for (const [name, headers] of cases) {
    const res = await postAction(app, headers)
    assert.equal(res.statusCode, 403, `${name}: ${res.body}`)
    assert.equal(res.json().code, 'csrf_failed', name)
  }
  for (const method of ['PATCH', 'DELETE'] as const) {
    const res = await app.http.inject({ method, url: `/api/projects/${app.projectId}/actions/1/`, headers: { cookie: browser.cookie }, payload: {} })
    assert.equal(res.statusCode, 403, method)
  }
  assert.equal(await actionCount(app), 0)

  assert.equal((await postAction(app, browser.headers)).statusCode, 201, 'same-origin request without Origin')
  // inject's Host is localhost:80; a browser leaves the default port out of Origin.
  assert.equal((await postAction(app, { ...browser.headers, origin: 'http://localhost' })).statusCode, 201, 'own Origin')
  const proxied = { ...browser.headers, host: 'tally.example.com:8443', origin: 'http://tally.example.com:8443' }
  assert.equal((await postAction(app, proxied)).statusCode, 201, 'own Origin on another Host and port')
  assertCsrfRefused(await postAction(app, { ...proxied, origin: 'http://tally.example.com' }))
  assert.equal(await actionCount(app), 3)
})

test('csrf: reads need no token; personal API keys are exempt even beside a session cookie', async (t) => {
  const app = await buildTestApp(t)
  const browser = await setUpOwner(app)
  const read = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/actions/`, headers: { cookie: browser.cookie, origin: 'https://evil.example' } })
  assert.equal(read.statusCode, 200)
  const byKey = await postAction(app, { ...app.auth, cookie: browser.cookie, origin: 'https://other.example' })
  assert.equal(byKey.statusCode, 201, byKey.body)
  assert.equal(byKey.json().created_by.email, 'owner@example.com')
  // An Authorization header is never read as the session: a wrong key stays wrong despite the cookie.
  const wrongKey = await postAction(app, { authorization: 'Bearer phx_wrong', cookie: browser.cookie })
  assert.equal(wrongKey.statusCode, 401)
  assert.equal(wrongKey.json().code, 'invalid_personal_api_key')
  const inQuery = await app.http.inject({ method: 'GET', url: `/api/users/@me/?personal_api_key=phx_wrong`, headers: { cookie: browser.cookie } })
  assert.equal(inQuery.statusCode, 401, 'a key named in the query is tried, not the cookie')
})

test('csrf: sign-in, set-up and sign-up from a foreign Origin are refused (no signing a browser into another account)', async (t) => {
  const app = await buildTestApp(t)
  await setUpOwner(app)
  const evil = { origin: 'https://evil.example' }
  assertCsrfRefused(await app.http.inject({ method: 'POST', url: '/api/login/', headers: evil, payload: { email: 'owner@example.com', password: OWNER_PASSWORD } }))
  const token = await app.services.auth.createSetupToken()
  assertCsrfRefused(await app.http.inject({ method: 'POST', url: '/api/setup/', headers: evil, payload: { token, email: 'x@example.com', password: 'long enough', first_name: 'X' } }))
  assert.equal((await app.http.inject({ method: 'GET', url: `/api/setup/?token=${token}` })).json().valid, true, 'the refused set-up did not use the token')
  assertCsrfRefused(await app.http.inject({ method: 'POST', url: '/api/signup/', headers: evil, payload: { invite_token: 'x', password: 'long enough', first_name: 'X' } }))
  const ok = await app.http.inject({ method: 'POST', url: '/api/login/', headers: { origin: 'http://localhost:80' }, payload: { email: 'owner@example.com', password: OWNER_PASSWORD } })
  assert.equal(ok.statusCode, 200)
})

test('csrf: the public ingestion and flags routes are untouched by sessions and CSRF', async (t) => {
  const app = await buildTestApp(t)
  const browser = await setUpOwner(app)
  const headers = { cookie: browser.cookie, origin: 'https://customer-site.example' }
  const capture = await app.http.inject({ method: 'POST', url: '/e/', headers, payload: { api_key: app.projectKey, event: 'pageview', distinct_id: 'd1' } })
  assert.equal(capture.statusCode, 200, capture.body)
  const decide = await app.http.inject({ method: 'POST', url: '/decide/?v=3', headers, payload: { api_key: app.projectKey, distinct_id: 'd1' } })
  assert.equal(decide.statusCode, 200, decide.body)
  // A session cookie alone does not stand in for the project key.
  const keyless = await app.http.inject({ method: 'POST', url: '/e/', headers, payload: { event: 'pageview', distinct_id: 'd1' } })
  assert.equal(keyless.statusCode, 401)
})

test('csrf: behind a trusted proxy the own origin is the client\'s scheme and host (X-Forwarded-Proto/-Host)', async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_TRUSTED_PROXIES: '127.0.0.1' } })
  const browser = await setUpOwner(app)
  const viaProxy = { ...browser.headers, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'tally.example.com', origin: 'https://tally.example.com' }
  assert.equal((await postAction(app, viaProxy)).statusCode, 201)
  assertCsrfRefused(await postAction(app, { ...viaProxy, origin: 'http://tally.example.com' }))
  // From an address that is not a trusted proxy, the forwarded headers are not believed.
  const untrusted = await app.http.inject({
    method: 'POST',
    url: `/api/projects/${app.projectId}/actions/`,
    headers: viaProxy,
    remoteAddress: '203.0.113.5',
    payload: { name: 'via an untrusted hop', steps: [{ event: 'x' }] },
  })
  assertCsrfRefused(untrusted)
})
