import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startRoleProcess } from '../helpers/server-process.ts'
import { testEnv } from '../helpers/test-app.ts'
import { createTestDatabase, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'
import { natsQueueEnv, TEST_NATS_URL } from '../helpers/nats-server.ts'
import { freshClickHouseUrl, skipWithoutClickHouse } from '../helpers/clickhouse.ts'
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts'
import { eventually } from '../helpers/eventually.ts'

const EVENTS = 300

/** `tally_webhook_messages_total{…outcome="sent"}` summed over channels, from a process's /_metrics. */
async function sentBy(url: string): Promise<number> {
  const text = await (await fetch(`${url}/_metrics`)).text()
  let n = 0
  for (const m of text.matchAll(/^tally_webhook_messages_total\{[^}]*outcome="sent"[^}]*\} (\d+)/gm)) n += Number(m[1])
  return n
}

const skip = (!TEST_POSTGRES_URL || !TEST_NATS_URL) ? 'needs TEST_POSTGRES_URL and TEST_NATS_URL' : skipWithoutClickHouse()

test('two worker processes on PostgreSQL share the outbox: each message is sent by one of them, never by both', { skip, timeout: 240_000 }, async (t) => {
  const receiver = await startWebhookReceiver(t)
  const env: Record<string, string> = {
    ...testEnv('unused'),
    TALLY_DATABASE_URL: await createTestDatabase(t),
    ...natsQueueEnv(t),
    TALLY_CLICKHOUSE_URL: await freshClickHouseUrl(),
    TALLY_FLUSH_INTERVAL_MS: '20',
    TALLY_LOG_LEVEL: 'info',
    TALLY_WEBHOOK_ALLOW: '127.0.0.1',
    // A per-sender rate well below the load: a backlog builds, so both senders find messages due.
    TALLY_WEBHOOK_RATE_PER_SECOND: '40',
    TALLY_PERSON_CACHE_WARM: 'false',
  }
  delete env.TALLY_DATA_DIR
  // The first process migrates the database and makes the project; the second is a worker only.
  const a = await startRoleProcess(t, 'all', env)
  const b = await startRoleProcess(t, 'worker', env)
  const auth = { authorization: `Bearer ${env.TALLY_PERSONAL_API_KEY}`, 'content-type': 'application/json' }
  const created = await fetch(`${a.url}/api/projects/@current/destinations/`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'receiver', url: receiver.url(), filters: { events: ['matched'] }, body_template: '{"uuid": {event.uuid}}' }),
  })
  assert.equal(created.status, 201, await created.text())

  const uuids = Array.from({ length: EVENTS }, () => crypto.randomUUID())
  for (let i = 0; i < EVENTS; i += 30) {
    const batch = uuids.slice(i, i + 30).map((uuid, k) => ({ uuid, event: 'matched', distinct_id: `u${i + k}`, properties: {} }))
    const res = await fetch(`${a.url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: env.TALLY_PROJECT_API_KEY, batch }) })
    assert.equal(res.status, 200)
  }
  await eventually(async () => new Set(receiver.requests.map((r) => r.body)).size >= EVENTS, 600, 100)
  // A moment for a duplicate send to arrive, if one were under way.
  await new Promise((r) => setTimeout(r, 1500))
  const perUuid = new Map<string, number>()
  for (const r of receiver.requests) {
    const { uuid } = JSON.parse(r.body) as { uuid: string }
    perUuid.set(uuid, (perUuid.get(uuid) ?? 0) + 1)
  }
  assert.deepEqual([...perUuid.keys()].sort(), [...uuids].sort())
  const twice = [...perUuid].filter(([, n]) => n > 1)
  assert.deepEqual(twice, [], 'no message is sent twice')
  const [byA, byB] = [await sentBy(a.url), await sentBy(b.url)]
  assert.equal(byA + byB, EVENTS, `sent by A ${byA}, by B ${byB}`)
  assert.ok(byA > 0 && byB > 0, `both senders took part: A ${byA}, B ${byB}`)
})
