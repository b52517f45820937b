import assert from 'node:assert/strict'
import { engineEnv, testOnEachEngine } from '../helpers/engines.ts'
import { clickHouseStatement } from '../helpers/clickhouse.ts'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { buildTestApp, fileTestProjects, type TestApp } from '../helpers/test-app.ts'
import { aBrowserEvent, waitForEvents } from '../helpers/capture-helpers.ts'
import { loadConfig } from '../../src/config/load-config.ts'

// One app (per engine) for the file, a project of its own per test: each test reads only its own events.
const project = fileTestProjects()

const PATHS = ['/e', '/i/v0/e', '/capture', '/batch', '/track', '/engage']
const json = (v: unknown) => Buffer.from(JSON.stringify(v))
const b64 = (v: unknown) => json(v).toString('base64')

/** One way an SDK packs a body: returns the inject request for a path and a payload. */
type Encoding = (path: string, payload: unknown) => { method: 'GET' | 'POST'; url: string; headers?: Record<string, string>; payload?: Buffer | string }

const ENCODINGS: Record<string, Encoding> = {
  'plain JSON (posthog-python, node without compression)': (path, p) => ({ method: 'POST', url: path, headers: { 'content-type': 'application/json' }, payload: json(p) }),
  'gzip by Content-Encoding (posthog-node)': (path, p) => ({ method: 'POST', url: path, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload: gzipSync(json(p)) }),
  'gzip by magic bytes as text/plain (posthog-js 1.4xx)': (path, p) => ({ method: 'POST', url: path, headers: { 'content-type': 'text/plain' }, payload: gzipSync(json(p)) }),
  'gzip by ?compression=gzip-js (older posthog-js)': (path, p) => ({ method: 'POST', url: `${path}?compression=gzip-js&ver=1.200.0&_=${Date.now()}`, headers: { 'content-type': 'text/plain' }, payload: gzipSync(json(p)) }),
  'gzip by ?compression=gzip': (path, p) => ({ method: 'POST', url: `${path}?compression=gzip`, payload: gzipSync(json(p)), headers: { 'content-type': 'application/octet-stream' } }),
  'lz64 by ?compression=lz64 (old posthog-js)': (path, p) => ({ method: 'POST', url: `${path}?compression=lz64`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `data=${encodeURIComponent(LZString.compressToBase64(JSON.stringify(p)))}&compression=lz64` }),
  'form data= base64 with ?compression=base64 (sendBeacon)': (path, p) => ({ method: 'POST', url: `${path}?compression=base64`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `data=${encodeURIComponent(b64(p))}` }),
  'form data= plain JSON': (path, p) => ({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `data=${encodeURIComponent(JSON.stringify(p))}` }),
  'raw base64 body': (path, p) => ({ method: 'POST', url: path, headers: { 'content-type': 'text/plain' }, payload: b64(p) }),
  'GET ?data= base64': (path, p) => ({ method: 'GET', url: `${path}?data=${encodeURIComponent(b64(p))}` }),
  'GET ?data= JSON': (path, p) => ({ method: 'GET', url: `${path}?data=${encodeURIComponent(JSON.stringify(p))}` }),
}

/** The body shapes the SDKs send: posthog-node/python batch, posthog-js batch, bare array, single event. */
function shapes(token: string, tag: string) {
  return {
    'batch object with api_key': { api_key: token, sent_at: new Date().toISOString(), batch: [{ event: 'e', distinct_id: 'u1', uuid: crypto.randomUUID(), properties: { tag: `${tag} batch` } }] },
    'bare array with properties.token': [aBrowserEvent(token, { event: 'e', properties: { tag: `${tag} array` } })],
    'single event with api_key': { api_key: token, event: 'e', distinct_id: 'u1', properties: { tag: `${tag} single` } },
  }
}

testOnEachEngine('every capture path, with and without trailing slash, accepts every body encoding and shape', async (_t, engine) => {
  const app = await project(engine)
  let sent = 0
  for (const base of PATHS) {
    for (const path of [base, `${base}/`]) {
      for (const [encName, encode] of Object.entries(ENCODINGS)) {
        for (const [shapeName, payload] of Object.entries(shapes(app.projectKey, `${path} ${encName}`))) {
          const res = await app.http.inject(encode(path, payload))
          assert.equal(res.statusCode, 200, `${path} ${encName} ${shapeName}: ${res.body}`)
          assert.deepEqual(res.json(), { status: 1 })
          sent++
        }
      }
    }
  }
  const events = await waitForEvents(app, sent, { event: 'e' })
  const tags = new Set(events.map((e) => e.properties.tag))
  assert.equal(tags.size, sent)
})

testOnEachEngine('OPTIONS answers 200 with PostHog CORS headers for the origin', async (_t, engine) => {
  const app = await project(engine)
  for (const url of ['/e/', '/i/v0/e/', '/batch', '/capture/']) {
    const res = await app.http.inject({
      method: 'OPTIONS',
      url,
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,traceparent,x-evil' },
    })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), { status: 1 })
    assert.equal(res.headers['access-control-allow-origin'], 'https://app.example.com')
    assert.equal(res.headers['access-control-allow-credentials'], 'true')
    assert.equal(res.headers['access-control-allow-methods'], 'GET, POST, OPTIONS')
    assert.equal(res.headers['access-control-allow-headers'], 'X-Requested-With,Content-Type,traceparent')
  }
})

testOnEachEngine('a capture POST from a browser carries CORS headers, errors too', async (_t, engine) => {
  const app = await project(engine)
  const ok = await app.http.inject({ method: 'POST', url: '/e/', headers: { origin: 'http://localhost:3000' }, payload: aBrowserEvent(app.projectKey) })
  assert.equal(ok.headers['access-control-allow-origin'], 'http://localhost:3000')
  const bad = await app.http.inject({ method: 'POST', url: '/e/', headers: { origin: 'http://localhost:3000' }, payload: '{nope' })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.headers['access-control-allow-origin'], 'http://localhost:3000')
  const none = await app.http.inject({ method: 'POST', url: '/e/', payload: aBrowserEvent(app.projectKey) })
  assert.equal(none.headers['access-control-allow-origin'], undefined)
})

testOnEachEngine('an /engage body without an event name is ingested as $identify', async (_t, engine) => {
  const app = await project(engine)
  const res = await app.http.inject({ method: 'POST', url: '/engage/', payload: { $token: app.projectKey, $distinct_id: 'p1', $set: { plan: 'pro' } } })
  assert.equal(res.statusCode, 200)
  const [e] = await waitForEvents(app, 1, { event: '$identify' })
  assert.equal(e!.distinct_id, 'p1')
  assert.deepEqual(e!.properties.$set, { plan: 'pro' })
})

async function post(app: TestApp, body: unknown, url = '/batch/') {
  return app.http.inject({ method: 'POST', url, payload: body as object })
}

testOnEachEngine('events without a name, without distinct_id or with an empty one are dropped; the rest of the batch is stored', async (_t, engine) => {
  const app = await project(engine)
  const res = await post(app, {
    api_key: app.projectKey,
    batch: [
      { event: 'kept', distinct_id: 'a' },
      { distinct_id: 'b' },
      { event: '', distinct_id: 'c' },
      { event: 'no-id', properties: {} },
      { event: 'empty-id', distinct_id: '' },
      { event: 'kept', properties: { distinct_id: 'd' } },
    ],
  })
  assert.equal(res.statusCode, 200)
  assert.deepEqual(res.json(), { status: 1 })
  // The queue is FIFO: once a later request's event is readable, the batch above has been processed.
  await post(app, { api_key: app.projectKey, batch: [{ event: 'marker', distinct_id: 'm' }] })
  await waitForEvents(app, 1, { event: 'marker' })
  const kept = await waitForEvents(app, 2, { event: 'kept' })
  assert.deepEqual(kept.map((e) => e.distinct_id).sort(), ['a', 'd'])
  assert.equal((await waitForEvents(app, 3)).length, 3)
})

testOnEachEngine('the same uuid sent twice is stored once', async (_t, engine) => {
  const app = await project(engine)
  const uuid = crypto.randomUUID()
  const body = { api_key: app.projectKey, batch: [{ event: 'dup', distinct_id: 'u', uuid, properties: { n: 1 } }] }
  assert.equal((await post(app, body)).statusCode, 200)
  assert.equal((await post(app, body)).statusCode, 200)
  await post(app, { api_key: app.projectKey, batch: [{ event: 'marker', distinct_id: 'u' }] })
  await waitForEvents(app, 1, { event: 'marker' })
  const dups = await waitForEvents(app, 1, { event: 'dup' })
  assert.equal(dups.length, 1)
  assert.equal(dups[0]!.id, uuid)
})

testOnEachEngine('TALLY_DEDUP_WINDOW_EVENTS: a uuid resent after that many later events is stored again', async (t, engine) => {
  // Two generations of two: once five more events are stored, the first uuid has left the window.
  const events = await engineEnv(engine)
  const app = await buildTestApp(t, { env: { ...events, TALLY_DEDUP_WINDOW_EVENTS: '2' } })
  // ClickHouse's events table replaces rows of one uuid when it merges parts, at a time of its own
  // (PostHog's does too): merges stop here, so the test sees what Tally inserted, not what a merge left.
  if (events.TALLY_CLICKHOUSE_URL) await clickHouseStatement(`SYSTEM STOP MERGES \`${new URL(events.TALLY_CLICKHOUSE_URL).pathname.slice(1)}\`.events`)
  const uuid = crypto.randomUUID()
  const first = { api_key: app.projectKey, batch: [{ event: 'dup', distinct_id: 'u', uuid }] }
  const marker = async (n: number) => {
    assert.equal((await post(app, { api_key: app.projectKey, batch: [{ event: 'other', distinct_id: 'u' }] })).statusCode, 200)
    await waitForEvents(app, n, { event: 'other' })
  }
  assert.equal((await post(app, first)).statusCode, 200)
  assert.equal((await post(app, first)).statusCode, 200)
  for (let i = 1; i <= 5; i++) await marker(i)
  // The worker stores in order: the resend inside the window was processed before the markers.
  assert.equal((await waitForEvents(app, 1, { event: 'dup' })).length, 1, 'inside the window: stored once')
  assert.equal((await post(app, first)).statusCode, 200)
  await marker(6)
  assert.deepEqual((await waitForEvents(app, 1, { event: 'dup' })).map((e) => e.id), [uuid, uuid], 'after it: stored again')
  assert.throws(() => loadConfig({}, { TALLY_DEDUP_WINDOW_EVENTS: '0' }), /TALLY_DEDUP_WINDOW_EVENTS/)
})
