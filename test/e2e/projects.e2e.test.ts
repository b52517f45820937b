import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'

test('projects: the bootstrap project is listed with its api_token', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.http.inject({ url: '/api/projects/', headers: app.auth })
  assert.equal(res.statusCode, 200)
  const body = res.json()
  assert.equal(body.count, 1)
  assert.equal(body.next, null)
  assert.equal(body.results[0].api_token, app.projectKey)
  assert.equal(body.results[0].name, 'Default project')
  assert.equal(body.results[0].id, app.projectId)
})

test('projects: @current and the numeric id retrieve the same project', async (t) => {
  const app = await buildTestApp(t)
  const a = await app.http.inject({ url: '/api/projects/@current/', headers: app.auth })
  const b = await app.http.inject({ url: `/api/projects/${app.projectId}/`, headers: app.auth })
  assert.equal(a.statusCode, 200)
  assert.deepEqual(a.json(), b.json())
  assert.equal(a.json().api_token, app.projectKey)
})

test('auth: no credentials give 401 not_authenticated in PostHog shape', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.http.inject({ url: '/api/projects/' })
  assert.equal(res.statusCode, 401)
  assert.deepEqual(res.json(), {
    type: 'authentication_error',
    code: 'not_authenticated',
    detail: 'Authentication credentials were not provided.',
    attr: null,
  })
})

test('auth: a wrong personal key gives 401 invalid_personal_api_key', async (t) => {
  const app = await buildTestApp(t)
  for (const headers of [{ authorization: 'Bearer phx_wrong' }, { authorization: `Bearer ${app.projectKey}` }]) {
    const res = await app.http.inject({ url: `/api/projects/${app.projectId}/`, headers })
    assert.equal(res.statusCode, 401)
    assert.equal(res.json().type, 'authentication_error')
    assert.equal(res.json().code, 'invalid_personal_api_key')
  }
})

test('auth: the personal key is also read from the query string', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.http.inject({ url: `/api/projects/@current/?personal_api_key=${app.personalKey}` })
  assert.equal(res.statusCode, 200)
})

test('auth: personal keys are stored hashed, never in plain text', async (t) => {
  const app = await buildTestApp(t)
  const { readdir, readFile } = await import('node:fs/promises')
  const { join } = await import('node:path')
  async function* walk(dir: string): AsyncGenerator<string> {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (e.isDirectory()) yield* walk(join(dir, e.name))
      else yield join(dir, e.name)
    }
  }
  await app.close() // flush everything to disk
  const needle = Buffer.from(app.personalKey.slice(4))
  for await (const f of walk(app.dataDir)) assert.equal((await readFile(f)).includes(needle), false, f)
})

test('projects: a missing, malformed or foreign project id gives 404', async (t) => {
  const app = await buildTestApp(t)
  const other = await app.services.projects.createProject('Second')
  const stranger = await app.services.projects.createUser({ email: 's@x.io', firstName: 'S', projectIds: [other.project.id] })
  const headers = { authorization: `Bearer ${stranger.key}` }
  for (const id of [app.projectId, 999, 'abc', '99999999999']) {
    const res = await app.http.inject({ url: `/api/projects/${id}/`, headers })
    assert.equal(res.statusCode, 404, String(id))
    assert.equal(res.json().code, 'not_found')
  }
  const own = await app.http.inject({ url: '/api/projects/@current/', headers })
  assert.equal(own.json().id, other.project.id)
  const list = await app.http.inject({ url: '/api/projects/', headers })
  assert.deepEqual(list.json().results.map((p: { id: number }) => p.id), [other.project.id])
})

test('keys and data survive a restart on the same data dir', async (t) => {
  const first = await buildTestApp(t)
  const { dataDir, projectKey, personalKey } = first
  const created = await first.services.projects.createProject('Kept')
  await first.close()
  const again = await buildTestApp(t, { dataDir, env: { TALLY_PROJECT_API_KEY: 'phc_ignored', TALLY_PERSONAL_API_KEY: 'phx_ignored' } })
  assert.equal(again.bootstrap.created, false)
  const res = await again.http.inject({ url: '/api/projects/', headers: { authorization: `Bearer ${personalKey}` } })
  assert.equal(res.statusCode, 200)
  assert.deepEqual(
    res.json().results.map((p: { api_token: string }) => p.api_token),
    [projectKey, created.apiToken],
  )
  const ignored = await again.http.inject({ url: '/api/projects/', headers: { authorization: 'Bearer phx_ignored' } })
  assert.equal(ignored.statusCode, 401)
})

test('health answers 200 once the stores are open', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.http.inject({ url: '/_health' })
  assert.equal(res.statusCode, 200)
})

test('projects: effective_membership_level is the reader\'s own level (owner 15, admin 8, member 1)', async (t) => {
  const app = await buildTestApp(t)
  const { user: admin } = await app.services.auth.createAccount({ email: 'adm@example.com', firstName: 'A', password: null, level: 8 })
  const adminKey = (await app.services.projects.createPersonalKey(admin.id)).key
  const member = await app.services.projects.createUser({ email: 'mem@example.com', firstName: 'M', projectIds: [app.projectId] })
  for (const [who, headers, level] of [['owner', app.auth, 15], ['admin', { authorization: `Bearer ${adminKey}` }, 8], ['member', { authorization: `Bearer ${member.key}` }, 1]] as const) {
    const one = await app.http.inject({ url: `/api/projects/${app.projectId}/`, headers })
    assert.equal(one.statusCode, 200, one.body)
    assert.equal(one.json().effective_membership_level, level, `${who}: GET one`)
    const list = await app.http.inject({ url: '/api/projects/', headers })
    assert.deepEqual(list.json().results.map((p: { effective_membership_level: number }) => p.effective_membership_level), [level], `${who}: list`)
  }
  const patched = await app.http.inject({ method: 'PATCH', url: `/api/projects/${app.projectId}/`, headers: app.auth, payload: { name: 'Renamed' } })
  assert.equal(patched.json().effective_membership_level, 15, 'PATCH answers with the owner\'s level')
  const reset = await app.http.inject({ method: 'PATCH', url: `/api/projects/${app.projectId}/reset_token/`, headers: { authorization: `Bearer ${adminKey}` } })
  assert.equal(reset.statusCode, 200, reset.body)
  assert.equal(reset.json().effective_membership_level, 8, 'reset_token answers with the admin\'s level')
})
