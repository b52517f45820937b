import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startRoleProcess, type ServerProcess } from '../helpers/server-process.ts'
import { testEnv } from '../helpers/test-app.ts'
import { createTestDatabase, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'
import { natsQueueEnv, TEST_NATS_URL } from '../helpers/nats-server.ts'
import { eventually } from '../helpers/eventually.ts'

async function decideFlag(p: ServerProcess, apiKey: string, key: string): Promise<unknown> {
  const res = await fetch(`${p.url}/decide/?v=3`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: apiKey, distinct_id: 'someone' }) })
  assert.equal(res.status, 200)
  return ((await res.json()) as { featureFlags: Record<string, unknown> }).featureFlags[key]
}

test('a flag edited and a project token reset through the api process show in both capture processes (PostgreSQL LISTEN/NOTIFY)', { skip: (!TEST_POSTGRES_URL || !TEST_NATS_URL) && 'needs TEST_POSTGRES_URL and TEST_NATS_URL', timeout: 240_000 }, async (t) => {
  const env = { ...testEnv('unused'), TALLY_DATABASE_URL: await createTestDatabase(t), ...natsQueueEnv(t), TALLY_LOG_LEVEL: 'info' }
  delete (env as Record<string, string>).TALLY_DATA_DIR
  // DuckDB admits one process: the api and the worker share one; capture processes open no event store.
  const api = await startRoleProcess(t, 'api,worker', env)
  const captures = await Promise.all([startRoleProcess(t, 'capture', env), startRoleProcess(t, 'capture', env)])
  const headers = { authorization: `Bearer ${env.TALLY_PERSONAL_API_KEY}`, 'content-type': 'application/json' }
  const created = await fetch(`${api.url}/api/projects/@current/feature_flags/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ key: 'shared-flag', active: true, filters: { groups: [{ properties: [], rollout_percentage: 0 }] } }),
  })
  assert.equal(created.status, 201, await created.clone().text())
  const { id } = (await created.json()) as { id: number }
  // Each capture process loads (and caches) the project's flags.
  for (const c of captures) assert.equal(await eventually(async () => (await decideFlag(c, env.TALLY_PROJECT_API_KEY, 'shared-flag')) === false), true)

  const patched = await fetch(`${api.url}/api/projects/@current/feature_flags/${id}/`, { method: 'PATCH', headers, body: JSON.stringify({ filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }) })
  assert.equal(patched.status, 200)
  // Polled for at most ~2 s: the capture processes keep flags cached without expiry, so only the notification can bring the edit.
  for (const c of captures) await eventually(async () => (await decideFlag(c, env.TALLY_PROJECT_API_KEY, 'shared-flag')) === true, 40, 50)

  // A project token reset through the api process: capture processes, which cache tokens without
  // expiry, refuse the old one and take the new one.
  const reset = await fetch(`${api.url}/api/projects/@current/reset_token/`, { method: 'PATCH', headers, body: '{}' })
  assert.equal(reset.status, 200, await reset.clone().text())
  const { api_token: newKey } = (await reset.json()) as { api_token: string }
  const capture = (c: ServerProcess, key: string) =>
    fetch(`${c.url}/e/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: key, event: 'e', distinct_id: 'd' }) }).then((r) => r.status)
  for (const c of captures) {
    await eventually(async () => (await capture(c, env.TALLY_PROJECT_API_KEY)) === 401, 40, 50)
    assert.equal(await capture(c, newKey), 200)
  }
})
