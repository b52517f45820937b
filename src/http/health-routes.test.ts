import assert from 'node:assert/strict'
import { test } from 'node:test'
import Fastify from 'fastify'
import { healthRoutes, type Readiness } from './health-routes.ts'

const unblocked = { blocked: false, reason: null, since: null, components: {} }

async function serve(t: import('node:test').TestContext, readiness: Readiness, isReady = () => true) {
  const app = Fastify()
  await app.register(healthRoutes, { isReady, readiness, storeTimeoutMs: 50 })
  t.after(() => app.close())
  return app
}

test('/_ready answers 503 store_unavailable when a store does not answer or fails, while /_health stays 200', async (t) => {
  const app = await serve(t, {
    ingestion: () => unblocked,
    stores: { metadata: () => new Promise(() => {}), events: async () => { throw new Error('Connection Error: Connection already closed!') } },
  })
  const res = await app.inject({ method: 'GET', url: '/_ready' })
  assert.equal(res.statusCode, 503)
  assert.deepEqual(res.json(), {
    status: 'store_unavailable',
    ingestion: unblocked,
    stores: { metadata: 'did not answer within 50 ms', events: 'error: Connection Error: Connection already closed!' },
  })
  assert.equal((await app.inject({ method: 'GET', url: '/_health' })).statusCode, 200)
})

test('/_ready answers 503 ingestion_blocked with the reason while ingestion is blocked', async (t) => {
  const blocked = { blocked: true, reason: 'ENOSPC: no space left on device', since: '2026-01-01T00:00:00.000Z', components: { queue: { reason: 'ENOSPC: no space left on device', since: '2026-01-01T00:00:00.000Z', failures: 1 } } }
  const app = await serve(t, { ingestion: () => blocked, stores: { metadata: async () => 1 } })
  const res = await app.inject({ method: 'GET', url: '/_ready' })
  assert.equal(res.statusCode, 503)
  assert.deepEqual(res.json(), { status: 'ingestion_blocked', ingestion: blocked, stores: { metadata: 'ok' } })
})

test('/_ready and /_health answer 503 starting before the app is ready', async (t) => {
  const app = await serve(t, { ingestion: () => unblocked, stores: {} }, () => false)
  assert.equal((await app.inject({ method: 'GET', url: '/_ready' })).json().status, 'starting')
  assert.equal((await app.inject({ method: 'GET', url: '/_health' })).statusCode, 503)
})
