import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { generateToken } from '../../src/shared/ids.ts'
import { startServerProcess, tempDir, type ServerProcess } from '../helpers/server-process.ts'
import { startWebhookReceiver, type ReceivedRequest } from '../helpers/webhook-receiver.ts'
import { eventually } from '../helpers/eventually.ts'

/**
 * kill -9 between an event's store and its webhook's send, at each step of the way: the event stored
 * but its messages not planned (the batch not acked); the messages in the outbox, the batch not acked;
 * messages claimed (leased) but not sent; a message sent (2xx) but not marked sent; ten of the batch
 * row's messages sent, the rest not (a partial send: its row is not done). A last, unarmed start must
 * deliver every matched, acknowledged event at least once, each under one idempotency key.
 */
const POINTS = ['pipeline.after-store', 'notify.after-enqueue', 'outbox.after-claim', 'outbox.after-send', 'outbox.after-send:10'] as const
const MATCHED = 25

async function start(t: TestContext, dataDir: string, env: Record<string, string>): Promise<ServerProcess> {
  const p = await startServerProcess(dataDir, env)
  t.after(async () => {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGTERM')
      await p.exited
    }
  })
  return p
}

async function stop(p: ServerProcess): Promise<void> {
  p.child.kill('SIGTERM')
  await p.exited
}

for (const point of POINTS) {
  test(`kill -9 at ${point}: every matched event reaches the receiver, each under one idempotency key`, { timeout: 420_000 }, async (t) => {
    const receiver = await startWebhookReceiver(t)
    const dataDir = await tempDir(t, 'tally-outbox-kill-')
    const projectKey = generateToken('phc_')
    const personalKey = generateToken('phx_')
    const env = {
      TALLY_PROJECT_API_KEY: projectKey,
      TALLY_PERSONAL_API_KEY: personalKey,
      TALLY_WEBHOOK_ALLOW: '127.0.0.1',
      TALLY_WEBHOOK_TIMEOUT_MS: '1000',
      // A crashed sender's lease runs out soon, so the restarted one takes its messages over.
      TALLY_WEBHOOK_LEASE_MS: '2000',
      TALLY_WEBHOOK_RETRY_MIN_MS: '100',
      TALLY_PERSON_CACHE_WARM: 'false',
    }
    const auth = { authorization: `Bearer ${personalKey}`, 'content-type': 'application/json' }

    // Set-up: a destination for the event `matched` only.
    const first = await start(t, dataDir, env)
    const projects = (await (await fetch(`${first.url}/api/projects/`, { headers: auth })).json()) as { results: { id: number }[] }
    const projectId = projects.results[0]!.id
    const created = await fetch(`${first.url}/api/projects/${projectId}/destinations/`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'receiver', url: receiver.url(), filters: { events: ['matched'] }, body_template: '{"uuid": {event.uuid}}' }),
    })
    assert.equal(created.status, 201, await created.text())
    await stop(first)

    // The armed start: one batch, acknowledged, then the process kills itself at the point.
    const armed = await start(t, dataDir, { ...env, TALLY_CRASH_AT: point })
    const matched = Array.from({ length: MATCHED }, () => crypto.randomUUID())
    const batch = [
      ...matched.map((uuid, i) => ({ uuid, event: 'matched', distinct_id: `u${i}`, properties: {} })),
      ...Array.from({ length: 10 }, (_, i) => ({ uuid: crypto.randomUUID(), event: 'other', distinct_id: `o${i}`, properties: {} })),
    ]
    const res = await fetch(`${armed.url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: projectKey, batch }) })
    assert.equal(res.status, 200)
    await armed.exited
    assert.equal(armed.child.signalCode, 'SIGKILL', `the server died at ${point}`)
    const beforeRestart = receiver.requests.length

    // The last start, unarmed: it recovers the queue and the outbox.
    const last = await start(t, dataDir, env)
    const seen = await eventually(async () => {
      const uuids = new Set(receiver.requests.map((r) => (JSON.parse(r.body) as { uuid: string }).uuid))
      return matched.every((u) => uuids.has(u)) && uuids
    }, 300, 100)
    assert.equal(seen.size, MATCHED, 'only matched events are sent')
    const keys = new Map<string, Set<string>>()
    for (const r of receiver.requests as ReceivedRequest[]) {
      const uuid = (JSON.parse(r.body) as { uuid: string }).uuid
      keys.set(uuid, (keys.get(uuid) ?? new Set()).add(String(r.headers['idempotency-key'])))
    }
    for (const [uuid, k] of keys) assert.equal(k.size, 1, `event ${uuid} was sent under ${k.size} idempotency keys`)
    assert.equal(new Set([...keys.values()].map((k) => [...k][0])).size, MATCHED, 'one key per event')
    if (point === 'outbox.after-send') assert.ok(beforeRestart >= 1, 'a message reached the receiver before the kill')
    if (point === 'outbox.after-send:10') assert.ok(beforeRestart >= 10 && beforeRestart < MATCHED, `part of the batch reached the receiver before the kill: ${beforeRestart}`)
    await stop(last)
  })
}
