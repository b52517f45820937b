import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { openPostgresSqlClient } from '../../src/storage/postgres/postgres-sql-client.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { createTestDatabase, runOnTestServer, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'

const skip = TEST_POSTGRES_URL ? false : 'TEST_POSTGRES_URL not set'

const admin = runOnTestServer

test('a metadata store outage is a 503 with Retry-After on the private API and /flags/definitions, never a 401 or 500; capture goes on', { skip }, async (t) => {
  const url = await createTestDatabase(t)
  const name = new URL(url).pathname.slice(1)
  const app = await buildTestApp(t, { env: { TALLY_DATABASE_URL: url } })
  const stranger = await app.services.projects.createUser({ email: 'outage@x.io', firstName: 'O', projectIds: [app.projectId] })
  assert.equal((await app.http.inject({ url: `/api/projects/${app.projectId}/dashboards/`, headers: app.auth })).statusCode, 200)

  await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
  await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`)
  t.after(() => admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {})) // dropped already when it passed

  const down = [
    await app.http.inject({ url: `/api/projects/${app.projectId}/dashboards/`, headers: app.auth }),
    await app.http.inject({ url: `/flags/definitions?token=${app.projectKey}`, headers: app.auth }),
    // A key this process has not seen yet must be checked in the store: down is not "invalid".
    await app.http.inject({ url: `/api/projects/${app.projectId}/dashboards/`, headers: { authorization: `Bearer ${stranger.key}` } }),
  ]
  for (const res of down) {
    assert.equal(res.statusCode, 503, res.body)
    assert.deepEqual({ type: res.json().type, code: res.json().code }, { type: 'server_error', code: 'service_unavailable' })
    assert.equal(res.headers['retry-after'], '5')
  }
  const capture = await app.http.inject({ method: 'POST', url: '/e/', payload: { api_key: app.projectKey, event: 'e', distinct_id: 'u' } })
  assert.equal(capture.statusCode, 200, 'capture needs only the in-memory keys and the local queue')

  await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
  assert.equal((await app.http.inject({ url: `/api/projects/${app.projectId}/dashboards/`, headers: app.auth })).statusCode, 200)
  assert.equal((await app.http.inject({ url: `/api/projects/${app.projectId}/dashboards/`, headers: { authorization: `Bearer ${stranger.key}` } })).statusCode, 200)
})

test('a statement stuck behind a lock on PostgreSQL is cancelled after TALLY_DATABASE_STATEMENT_TIMEOUT_MS: a 503, not a hung request', { skip }, async (t) => {
  const url = await createTestDatabase(t)
  const app = await buildTestApp(t, { env: { TALLY_DATABASE_URL: url, TALLY_DATABASE_STATEMENT_TIMEOUT_MS: '500' } })
  const locker = new pg.Client({ connectionString: url })
  locker.on('error', () => {}) // the database is dropped with FORCE when the test ends
  await locker.connect()
  await locker.query('BEGIN')
  await locker.query('LOCK TABLE dashboards IN ACCESS EXCLUSIVE MODE')
  const stuck = await app.http.inject({ url: `/api/projects/${app.projectId}/dashboards/`, headers: app.auth })
  assert.equal(stuck.statusCode, 503, stuck.body)
  assert.equal(stuck.json().code, 'service_unavailable')
  await locker.query('ROLLBACK')
  await locker.end()
  assert.equal((await app.http.inject({ url: `/api/projects/${app.projectId}/dashboards/`, headers: app.auth })).statusCode, 200)
})

test('a server connection that dies inside a transaction fails that transaction, never the process', { skip }, async (t) => {
  const url = await createTestDatabase(t)
  const name = new URL(url).pathname.slice(1)
  const sql = openPostgresSqlClient(url)
  t.after(() => sql.close())
  const outcome = sql.inTransaction(async (tx) => {
    await tx.query('SELECT 1')
    // The connection is checked out and idle in the transaction when the server drops it.
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`)
    await new Promise((resolve) => setTimeout(resolve, 300))
    await tx.query('SELECT 2')
  })
  await assert.rejects(outcome)
  assert.deepEqual(await sql.query('SELECT 3 AS n'), [{ n: 3 }], 'the pool opens a new connection afterwards')
})
