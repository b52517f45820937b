import assert from 'node:assert/strict'
import { test } from 'node:test'
import { privateApi } from '../helpers/private-api.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { openPostgresSqlClient } from '../../src/storage/postgres/postgres-sql-client.ts'
import { createTestDatabase, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'

const skip = TEST_POSTGRES_URL ? false : 'TEST_POSTGRES_URL not set'

// The services on a PostgreSQL MetaStore, through HTTP: the store contracts check each store alone;
// this checks the services' transactions (a pool, not PGlite's one connection) across the stores.
test('postgres metastore: dashboards, tiles, insights, actions, flags, cohorts and /decide work end to end', { skip }, async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_DATABASE_URL: await createTestDatabase(t) } })
  const api = privateApi(app)
  const src = (await api.post('/dashboards/', { name: 'src ☕', filters: { date_from: '-7d' } })).json()
  const insight = await api.post('/insights/', { name: 'I', query: { kind: 'TrendsQuery', big: Number.MAX_SAFE_INTEGER }, dashboards: [src.id] })
  assert.equal(insight.statusCode, 201, insight.body)
  assert.equal(insight.json().query.big, Number.MAX_SAFE_INTEGER)
  await api.patch(`/dashboards/${src.id}/`, { tiles: [{ text: { body: 'txt' } }] })
  const deep = await api.post('/dashboards/', { name: 'deep', use_dashboard: src.id, duplicate_tiles: true })
  assert.equal(deep.statusCode, 201, deep.body)
  assert.equal(deep.json().tiles.length, 2)
  const del = await api.patch(`/dashboards/${src.id}/`, { deleted: true, delete_insights: true })
  assert.equal(del.statusCode, 200, del.body)
  assert.equal((await api.get(`/insights/${insight.json().id}/`)).statusCode, 404)

  const action = await api.post('/actions/', { name: 'Signed up', steps: [{ event: 'signup' }] })
  assert.equal(action.statusCode, 201, action.body)
  assert.equal((await api.post('/actions/', { name: 'Signed up' })).statusCode, 400)

  // More concurrent transactions than the pool has connections (10): none may wait on another forever.
  const burst = await Promise.all([
    ...Array.from({ length: 15 }, (_, i) => api.post('/actions/', { name: `burst ${i}`, steps: [{ event: 'e' }] })),
    ...Array.from({ length: 15 }, (_, i) => api.post('/dashboards/', { name: `copy ${i}`, use_dashboard: deep.json().id, duplicate_tiles: true })),
    ...Array.from({ length: 5 }, () => api.post('/actions/', { name: 'burst same' })),
  ])
  assert.deepEqual(burst.slice(0, 30).map((r) => r.statusCode), Array(30).fill(201))
  assert.deepEqual(burst.slice(30).map((r) => r.statusCode).sort(), [201, 400, 400, 400, 400])

  const cohort = await api.post('/cohorts/', { name: 'uploaded', is_static: true, distinct_ids: ['u1', 'u2'] })
  assert.equal(cohort.statusCode, 201, cohort.body)
  assert.equal(cohort.json().count, 2)
  const flag = await api.post('/feature_flags/', {
    key: 'static-only',
    filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort.json().id }], rollout_percentage: 100 }] },
  })
  assert.equal(flag.statusCode, 201, flag.body)
  assert.equal((await api.post('/feature_flags/', { key: 'static-only' })).json().code, 'unique')

  const decide = async (distinctId: string) =>
    (await app.http.inject({ method: 'POST', url: '/decide/?v=3', payload: { api_key: app.projectKey, distinct_id: distinctId } })).json().featureFlags
  assert.deepEqual(await decide('u1'), { 'static-only': true })
  assert.deepEqual(await decide('stranger'), { 'static-only': false })
})

test('postgres metastore: its connections run without JIT (a large persons look-up JIT-compiled took 2.8x as long)', { skip }, async (t) => {
  const db = openPostgresSqlClient(await createTestDatabase(t), { poolSize: 2 })
  t.after(() => db.close())
  assert.deepEqual(await db.query('SHOW jit'), [{ jit: 'off' }])
  // Every connection of the pool, and inside a transaction too.
  assert.deepEqual(await Promise.all([db.query('SHOW jit'), db.inTransaction((tx) => tx.query('SHOW jit'))]), [[{ jit: 'off' }], [{ jit: 'off' }]])
})
