import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { gzipSync } from 'node:zlib'
import { fileTestApps } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'

// One app per engine for the whole file (and one per engine with a 4 KB body limit): every test but
// one sends a request the app refuses, which stores nothing; the one that stores an event reads back
// only its own event name.
const sharedApp = fileTestApps()
const smallBodyApp = fileTestApps({ env: { TALLY_MAX_BODY_BYTES: '4096' } })
const event = (extra: Record<string, unknown> = {}) => ({ event: 'e', distinct_id: 'u', ...extra })

testOnEachEngine('an unknown project key answers 401 invalid_api_key', async (_t, engine) => {
  const app = await sharedApp(engine)
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: 'phc_nobody', batch: [event()] } })
  assert.equal(res.statusCode, 401)
  assert.deepEqual(res.json(), {
    type: 'authentication_error',
    code: 'invalid_api_key',
    detail: 'Project API key invalid. You can find your project API key in PostHog project settings.',
    attr: null,
  })
})

testOnEachEngine('a request without any key answers 401 missing_api_key', async (_t, engine) => {
  const app = await sharedApp(engine)
  const res = await app.http.inject({ method: 'POST', url: '/e/', payload: event() })
  assert.equal(res.statusCode, 401)
  assert.equal(res.json().type, 'authentication_error')
  assert.equal(res.json().code, 'missing_api_key')
})

testOnEachEngine('a malformed key answers 401 with the shape problem', async (_t, engine) => {
  const app = await sharedApp(engine)
  const res = await app.http.inject({ method: 'POST', url: '/e/', payload: event({ api_key: 'x'.repeat(65) }) })
  assert.equal(res.statusCode, 401)
  assert.equal(res.json().code, 'too_long')
})

testOnEachEngine('events of one batch naming different keys answer 401', async (_t, engine) => {
  const app = await sharedApp(engine)
  const res = await app.http.inject({ method: 'POST', url: '/e/', payload: [event({ api_key: app.projectKey }), event({ api_key: 'phc_other' })] })
  assert.equal(res.statusCode, 401)
  assert.equal(res.json().code, 'invalid_api_key')
})

testOnEachEngine('a personal API key with project_id is accepted and the event lands in that project', async (_t, engine) => {
  const app = await sharedApp(engine)
  const res = await app.http.inject({ method: 'POST', url: '/capture/', payload: { api_key: app.personalKey, project_id: app.projectId, ...event({ event: 'via-personal' }) } })
  assert.equal(res.statusCode, 200)
  await waitForEvents(app, 1, { event: 'via-personal' })
})

testOnEachEngine('a personal API key without project_id answers 400 invalid_project', async (_t, engine) => {
  const app = await sharedApp(engine)
  const res = await app.http.inject({ method: 'POST', url: '/capture/', payload: { api_key: app.personalKey, ...event() } })
  assert.equal(res.statusCode, 400)
  assert.equal(res.json().code, 'invalid_project')
  assert.equal(res.json().attr, 'project_id')
})

testOnEachEngine('a personal API key with a foreign project_id answers 400 invalid_project', async (_t, engine) => {
  const app = await sharedApp(engine)
  const res = await app.http.inject({ method: 'POST', url: '/capture/?project_id=999999', payload: { api_key: app.personalKey, ...event() } })
  assert.equal(res.statusCode, 400)
  assert.equal(res.json().code, 'invalid_project')
})

testOnEachEngine('a wrong personal API key answers 401 invalid_personal_api_key', async (_t, engine) => {
  const app = await sharedApp(engine)
  const res = await app.http.inject({ method: 'POST', url: '/capture/', payload: { api_key: 'phx_wrong', project_id: app.projectId, ...event() } })
  assert.equal(res.statusCode, 401)
  assert.equal(res.json().code, 'invalid_personal_api_key')
})

testOnEachEngine('malformed JSON answers 400 invalid_payload naming the problem', async (_t, engine) => {
  const app = await sharedApp(engine)
  const res = await app.http.inject({ method: 'POST', url: '/batch/', headers: { 'content-type': 'application/json' }, payload: '{"api_key": "x", "batch": [' })
  assert.equal(res.statusCode, 400)
  const body = res.json()
  assert.equal(body.type, 'validation_error')
  assert.equal(body.code, 'invalid_payload')
  assert.match(body.detail, /^Malformed request data: Invalid JSON/)
})

testOnEachEngine('a body that claims gzip but is not answers 400 invalid_payload', async (_t, engine) => {
  const app = await sharedApp(engine)
  const res = await app.http.inject({ method: 'POST', url: '/batch/', headers: { 'content-encoding': 'gzip' }, payload: 'not gzip at all' })
  assert.equal(res.statusCode, 400)
  assert.equal(res.json().code, 'invalid_payload')
  assert.match(res.json().detail, /gzip/)
})

testOnEachEngine('an empty batch answers 400', async (_t, engine) => {
  const app = await sharedApp(engine)
  for (const payload of [{ api_key: app.projectKey, batch: [] }, []]) {
    const res = await app.http.inject({ method: 'POST', url: '/batch/', payload })
    assert.equal(res.statusCode, 400)
    assert.equal(res.json().code, 'invalid_payload')
  }
})

testOnEachEngine('an empty body answers 400 with PostHog no-data detail', async (_t, engine) => {
  const app = await sharedApp(engine)
  const res = await app.http.inject({ method: 'POST', url: '/e/', headers: { 'content-type': 'application/json' }, payload: '' })
  assert.equal(res.statusCode, 400)
  assert.match(res.json().detail, /No data found/)
})

testOnEachEngine('a body over the limit answers 413 request_too_large', async (_t, engine) => {
  const app = await smallBodyApp(engine)
  const big = JSON.stringify({ api_key: app.projectKey, batch: [event({ properties: { pad: 'x'.repeat(8000) } })] })
  const res = await app.http.inject({ method: 'POST', url: '/batch/', headers: { 'content-type': 'application/json' }, payload: big })
  assert.equal(res.statusCode, 413)
  assert.deepEqual(res.json(), { type: 'client_error', code: 'request_too_large', detail: 'Request too large.', attr: null })
})

testOnEachEngine('a gzip body that inflates past the limit answers 413', async (_t, engine) => {
  const app = await smallBodyApp(engine)
  const bomb = gzipSync(JSON.stringify({ api_key: app.projectKey, batch: [event({ properties: { pad: 'x'.repeat(100_000) } })] }))
  assert.ok(bomb.length < 4096)
  const res = await app.http.inject({ method: 'POST', url: '/batch/', headers: { 'content-encoding': 'gzip' }, payload: bomb })
  assert.equal(res.statusCode, 413)
  assert.equal(res.json().code, 'request_too_large')
})

testOnEachEngine('a body streamed without Content-Length is cut off at the limit with 413', async (_t, engine) => {
  const app = await smallBodyApp(engine)
  const { Readable } = await import('node:stream')
  const chunks = Array.from({ length: 100 }, () => Buffer.alloc(1024, 0x20))
  const res = await app.http.inject({ method: 'POST', url: '/batch/', headers: { 'content-type': 'application/json' }, payload: Readable.from(chunks) })
  assert.equal(res.statusCode, 413)
})
