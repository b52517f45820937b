import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { createTestDatabase, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'

const skip = TEST_POSTGRES_URL ? false : 'TEST_POSTGRES_URL not set'

test('postgres metastore: bootstrap, projects and keys work on a PostgreSQL server', { skip }, async (t) => {
  const url = await createTestDatabase(t)
  const app = await buildTestApp(t, { env: { TALLY_DATABASE_URL: url } })
  const res = await app.http.inject({ url: '/api/projects/@current/', headers: app.auth })
  assert.equal(res.statusCode, 200)
  assert.equal(res.json().api_token, app.projectKey)
  const other = await app.services.projects.createProject('Second')
  const stranger = await app.services.projects.createUser({ email: 'pg@x.io', firstName: 'P', projectIds: [other.project.id] })
  const denied = await app.http.inject({ url: `/api/projects/${app.projectId}/`, headers: { authorization: `Bearer ${stranger.key}` } })
  assert.equal(denied.statusCode, 404)
})

test('postgres metastore: a restart finds the same keys and applies no migration twice', { skip }, async (t) => {
  const url = await createTestDatabase(t)
  const first = await buildTestApp(t, { env: { TALLY_DATABASE_URL: url } })
  await first.close()
  const again = await buildTestApp(t, {
    dataDir: first.dataDir,
    env: { TALLY_DATABASE_URL: url, TALLY_PERSONAL_API_KEY: first.personalKey, TALLY_PROJECT_API_KEY: first.projectKey },
  })
  assert.equal(again.bootstrap.created, false)
  const res = await again.http.inject({ url: '/api/projects/', headers: first.auth })
  assert.deepEqual(res.json().results.map((p: { api_token: string }) => p.api_token), [first.projectKey])
})
