import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileTestProjects, type TestApp } from '../helpers/test-app.ts'

// One app for the file, a project of its own per test: the counts and lists below are the test's own.
const project = fileTestProjects()

function api(app: TestApp) {
  const base = `/api/projects/${app.projectId}`
  return {
    post: (path: string, payload: unknown) => app.http.inject({ method: 'POST', url: `${base}${path}`, headers: app.auth, payload: payload as object }),
    patch: (path: string, payload: unknown) => app.http.inject({ method: 'PATCH', url: `${base}${path}`, headers: app.auth, payload: payload as object }),
    get: (path: string) => app.http.inject({ url: `${base}${path}`, headers: app.auth }),
    del: (path: string) => app.http.inject({ method: 'DELETE', url: `${base}${path}`, headers: app.auth }),
  }
}

const simple = (key: string, extra: object = {}) => ({ key, filters: { groups: [{ properties: [], rollout_percentage: 100 }] }, ...extra })

test('feature flags: create returns 201 with PostHog fields, version 1 and created_by', async () => {
  const app = await project()
  const res = await api(app).post('/feature_flags/', { key: 'beta', name: 'Beta', filters: { groups: [{ properties: [], rollout_percentage: 30 }] } })
  assert.equal(res.statusCode, 201, res.body)
  const flag = res.json()
  assert.equal(flag.key, 'beta')
  assert.equal(flag.version, 1)
  assert.equal(flag.active, true)
  assert.equal(flag.deleted, false)
  assert.equal(flag.is_simple_flag, true)
  assert.equal(flag.rollout_percentage, 30)
  assert.equal(flag.ensure_experience_continuity, false)
  assert.equal(flag.created_by.email, 'owner@tally.local')
  assert.deepEqual(flag.tags, [])
})

test('feature flags: an empty filters object reads back as one 100 % condition', async () => {
  const app = await project()
  const res = await api(app).post('/feature_flags/', { key: 'all' })
  assert.equal(res.statusCode, 201)
  assert.deepEqual(res.json().filters, { groups: [{ properties: [], rollout_percentage: null }] })
})

test('feature flags: a missing key gives 400 required on attr key', async () => {
  const app = await project()
  const res = await api(app).post('/feature_flags/', { name: 'x' })
  assert.equal(res.statusCode, 400)
  assert.deepEqual(res.json(), { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'key' })
})

test('feature flags: a key with disallowed characters gives invalid_key', async () => {
  const app = await project()
  const res = await api(app).post('/feature_flags/', simple('no spaces!'))
  assert.equal(res.statusCode, 400)
  assert.equal(res.json().code, 'invalid_key')
  assert.equal(res.json().detail, 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.')
})

test('feature flags: a duplicate key gives 400 unique; a soft-deleted key can be reused', async () => {
  const app = await project()
  const first = await api(app).post('/feature_flags/', simple('dup'))
  const again = await api(app).post('/feature_flags/', simple('dup'))
  assert.equal(again.statusCode, 400)
  assert.deepEqual(again.json(), { type: 'validation_error', code: 'unique', detail: 'There is already a feature flag with this key.', attr: 'key' })
  await api(app).patch(`/feature_flags/${first.json().id}/`, { deleted: true })
  assert.equal((await api(app).post('/feature_flags/', simple('dup'))).statusCode, 201)
})
