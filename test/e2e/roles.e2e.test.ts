import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { startRoleProcess, tempDir } from '../helpers/server-process.ts'
import { testEnv } from '../helpers/test-app.ts'
import { createTestDatabase, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'
import { natsQueueEnv, TEST_NATS_URL } from '../helpers/nats-server.ts'
import { someEvents } from '../helpers/ingestion-outage.ts'
import { eventually } from '../helpers/eventually.ts'
import { tallyArgs } from '../helpers/tally-command.ts'

test('with embedded stores, a role other than all refuses to start and says why', async (t) => {
  const dir = await tempDir(t)
  const r = spawnSync(process.execPath, tallyArgs('serve', '--role', 'capture', '--port', '0', '--data-dir', dir), { encoding: 'utf8', timeout: 120_000, env: { ...process.env, TALLY_NATS_URL: '', TALLY_DATABASE_URL: '' } })
  assert.equal(r.status, 1)
  assert.match(r.stderr, /--role capture: with embedded stores only --role all can run/)
  assert.match(r.stderr, /TALLY_DATABASE_URL.*TALLY_NATS_URL/)
  const bad = spawnSync(process.execPath, tallyArgs('serve', '--role', 'capture,reader', '--data-dir', dir), { encoding: 'utf8', timeout: 120_000 })
  assert.equal(bad.status, 1)
  assert.match(bad.stderr, /"reader" is not a role/)
})

test('roles on PostgreSQL + NATS: a capture process takes events, an api,worker process stores and serves them; each serves only its routes', { skip: (!TEST_POSTGRES_URL || !TEST_NATS_URL) && 'needs TEST_POSTGRES_URL and TEST_NATS_URL', timeout: 180_000 }, async (t) => {
  const env = { ...testEnv('unused'), TALLY_DATABASE_URL: await createTestDatabase(t), ...natsQueueEnv(t), TALLY_FLUSH_INTERVAL_MS: '20', TALLY_LOG_LEVEL: 'info' }
  delete (env as Record<string, string>).TALLY_DATA_DIR
  // The api,worker process first: it migrates the database and makes the project.
  const api = await startRoleProcess(t, 'api,worker', env)
  const capture = await startRoleProcess(t, 'capture', env)
  const auth = { authorization: `Bearer ${env.TALLY_PERSONAL_API_KEY}` }

  const events = someEvents('split', 60)
  for (let i = 0; i < events.length; i += 20) {
    const res = await fetch(`${capture.url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: env.TALLY_PROJECT_API_KEY, batch: events.slice(i, i + 20) }) })
    assert.equal(res.status, 200)
  }
  const stored = await eventually(async () => {
    const res = await fetch(`${api.url}/api/projects/@current/events/?event=split&limit=1000`, { headers: auth })
    const body = (await res.json()) as { results: Array<{ id: string }> }
    return body.results.length >= events.length && body.results
  })
  assert.deepEqual(stored.map((e) => e.id).sort(), events.map((e) => e.uuid).sort())

  // Each process serves its role's routes only.
  assert.equal((await fetch(`${capture.url}/api/projects/@current/`, { headers: auth })).status, 404)
  assert.equal((await fetch(`${api.url}/batch/`, { method: 'POST', body: '{}' })).status, 404)
  assert.equal((await fetch(`${capture.url}/decide/?v=3`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: env.TALLY_PROJECT_API_KEY, distinct_id: 'd' }) })).status, 200)

  // /_ready checks what the role uses: no event store in a capture process.
  const captureReady = (await (await fetch(`${capture.url}/_ready`)).json()) as { status: string; stores: Record<string, string> }
  assert.deepEqual(captureReady, { ...captureReady, status: 'ready', stores: { metadata: 'ok' } })
  const apiReady = (await (await fetch(`${api.url}/_ready`)).json()) as { status: string; stores: Record<string, string> }
  assert.equal(apiReady.status, 'ready')
  assert.equal(apiReady.stores.events, 'ok')
  // The queue's figures come from JetStream's consumer info, in every role.
  const metrics = await eventually(async () => {
    const text = await (await fetch(`${capture.url}/_metrics`)).text()
    return /tally_queue_published_total 60/.test(text) && text
  })
  assert.match(metrics, /tally_queue_backlog_events \d+/)
})
