import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { PostHog } from 'posthog-node'
import { buildTestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'

testOnEachEngine('posthog-node (gzip /batch/) captures many events that all read back with properties and timestamps', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const host = await app.http.listen({ host: '127.0.0.1', port: 0 })
  const client = new PostHog(app.projectKey, { host, flushAt: 50, flushInterval: 0, fetchRetryCount: 0 })
  const base = Date.parse('2024-06-01T10:00:00.000Z')
  const n = 300
  for (let i = 0; i < n; i++) {
    client.capture({
      distinctId: `user-${i % 7}`,
      event: 'node_event',
      properties: { i, plan: i % 2 ? 'pro' : 'free', nested: { list: [i, 'x'] } },
      timestamp: new Date(base + i * 1000),
    })
  }
  client.identify({ distinctId: 'user-1', properties: { email: 'one@example.com' } })
  await client.shutdown()

  const events = await waitForEvents(app, n, { event: 'node_event' })
  assert.equal(events.length, n)
  const byI = new Map(events.map((e) => [e.properties.i as number, e]))
  for (let i = 0; i < n; i++) {
    const e = byI.get(i)
    assert.ok(e, `event ${i} missing`)
    assert.equal(e.distinct_id, `user-${i % 7}`)
    assert.equal(e.properties.plan, i % 2 ? 'pro' : 'free')
    assert.deepEqual(e.properties.nested, { list: [i, 'x'] })
    assert.equal(e.properties.$lib, 'posthog-node')
    // The SDK sends sent_at with each batch; the skew correction keeps its (past) timestamps within
    // the few ms between building and receiving the request.
    assert.ok(Math.abs(Date.parse(e.timestamp) - (base + i * 1000)) < 60_000, `event ${i}: ${e.timestamp}`)
    assert.match(e.id, /^[0-9a-f-]{36}$/)
  }
  const [identify] = await waitForEvents(app, 1, { event: '$identify' })
  assert.deepEqual((identify!.properties.$set as Record<string, unknown>).email, 'one@example.com')
})
