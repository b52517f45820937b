import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { EventStore } from '../../src/ingestion/event-store.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { someEvents } from '../helpers/ingestion-outage.ts'

const ORIGIN = 'https://shop.example'

function assertCors(res: { headers: Record<string, unknown>; statusCode: number }, what: string) {
  assert.equal(res.headers['access-control-allow-origin'], ORIGIN, `${what} (${res.statusCode}) carries CORS headers`)
  assert.equal(res.headers['access-control-allow-credentials'], 'true', what)
}

test('GET /api/surveys/?token= answers PostHog\'s empty survey list with CORS, and its preflight', async (t) => {
  const app = await buildTestApp(t)
  for (const url of [`/api/surveys/?token=${app.projectKey}`, `/api/surveys?token=${app.projectKey}`]) {
    const res = await app.http.inject({ url, headers: { origin: ORIGIN } })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { surveys: [], survey_config: null })
    assertCors(res, url)
  }
  const preflight = await app.http.inject({ method: 'OPTIONS', url: '/api/surveys/', headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } })
  assert.equal(preflight.statusCode, 200)
  assertCors(preflight, 'preflight')
})

test('GET /api/surveys/ without a token or with an unknown one is PostHog\'s 401, with CORS', async (t) => {
  const app = await buildTestApp(t)
  const missing = await app.http.inject({ url: '/api/surveys/', headers: { origin: ORIGIN } })
  assert.equal(missing.statusCode, 401)
  assert.deepEqual({ type: missing.json().type, code: missing.json().code }, { type: 'authentication_error', code: 'missing_api_key' })
  assertCors(missing, 'no token')
  const unknown = await app.http.inject({ url: '/api/surveys/?token=phc_nobody', headers: { origin: ORIGIN } })
  assert.equal(unknown.statusCode, 401)
  assert.equal(unknown.json().code, 'invalid_api_key')
  assertCors(unknown, 'unknown token')
})

test('every public route\'s 404, 400 and 401 carries CORS headers; a private API 404 does not', async (t) => {
  const app = await buildTestApp(t)
  const cases = [
    { url: '/e/unknown/path', status: 404 },
    { url: '/decide/extra', status: 404 },
    { url: `/array/${app.projectKey}/nothing`, status: 404 },
    { url: '/array/phc_nobody/config', status: 404 },
    { url: '/static/a/b/c.js', status: 404 },
    { url: '/api/surveys/1/', status: 404 },
    { url: '/e/%zz', status: 400 },
    { method: 'POST' as const, url: '/e/', payload: '{not json', status: 400 },
    { method: 'POST' as const, url: '/decide/?v=3', payload: '{not json', status: 400 },
    { method: 'POST' as const, url: '/flags/?v=2', payload: JSON.stringify({ distinct_id: 'u' }), status: 401 },
    { method: 'POST' as const, url: '/i/v0/e/', payload: JSON.stringify({ event: 'x', distinct_id: 'u' }), status: 401 },
  ]
  for (const c of cases) {
    const res = await app.http.inject({ method: c.method ?? 'GET', url: c.url, payload: c.payload, headers: { origin: ORIGIN, 'content-type': 'application/json' } })
    assert.equal(res.statusCode, c.status, `${c.url}: ${res.body}`)
    assert.ok(res.json().code, `${c.url} answers PostHog's error shape`)
    assertCors(res, c.url)
  }
  const privateMiss = await app.http.inject({ url: '/api/nothing/', headers: { origin: ORIGIN } })
  assert.equal(privateMiss.statusCode, 404)
  assert.equal(privateMiss.headers['access-control-allow-origin'], undefined)
})

test('capture\'s 503 (the queue is full) carries CORS headers and Retry-After', async (t) => {
  let release: () => void = () => {}
  const held = new Promise<void>((resolve) => (release = resolve))
  const wrapEventStore = (inner: EventStore): EventStore => ({
    insertBatch: async (events) => {
      await held
      return inner.insertBatch(events)
    },
    close: () => inner.close(),
  })
  const app = await buildTestApp(t, { env: { TALLY_QUEUE_MAX_BACKLOG_BYTES: String(16 * 1024), TALLY_MAX_BATCH_EVENTS: '5', TALLY_PERSON_CACHE_WARM: 'false' }, wrapEventStore })
  try {
    let refused = null
    for (let i = 0; i < 50 && !refused; i++) {
      const batch = someEvents('pad', 20).map((e) => ({ ...e, properties: { pad: 'p'.repeat(300) } }))
      const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch }, headers: { origin: ORIGIN } })
      if (res.statusCode === 503) refused = res
      else assert.equal(res.statusCode, 200, res.body)
    }
    assert.ok(refused, 'the queue filled up')
    assert.equal(refused.json().code, 'service_unavailable')
    assert.ok(refused.headers['retry-after'])
    assertCors(refused, '503')
  } finally {
    release()
  }
})
