import assert from 'node:assert/strict'
import { test } from 'node:test'
import { gzipSync } from 'node:zlib'
import { randomBytes } from 'node:crypto'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { aRecording, aSnapshotBatch, listRecordings, readSessionFile } from '../helpers/replay.ts'
import { createTestDatabase, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'

const json = (v: unknown) => Buffer.from(JSON.stringify(v))
const ORIGIN = 'https://shop.example.com'

/** How posthog-js (and its older builds, and sendBeacon) pack a `/s/` body. */
const ENCODINGS: Record<string, (p: unknown) => { url: string; headers: Record<string, string>; payload: Buffer | string }> = {
  'gzip sniffed from the body, text/plain, no hint (posthog-js 1.4xx)': (p) => ({ url: '/s/', headers: { 'content-type': 'text/plain' }, payload: gzipSync(json(p)) }),
  'gzip by ?compression=gzip-js (older posthog-js)': (p) => ({ url: `/s/?compression=gzip-js&ver=1.200.0&_=${Date.now()}`, headers: { 'content-type': 'text/plain' }, payload: gzipSync(json(p)) }),
  'base64 form data= with ?compression=base64 (sendBeacon)': (p) => ({
    url: '/s/?compression=base64',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `data=${encodeURIComponent(json(p).toString('base64'))}`,
  }),
  'plain JSON': (p) => ({ url: '/s', headers: { 'content-type': 'application/json' }, payload: json(p) }),
}

async function postSnapshots(app: TestApp, req: { url: string; headers: Record<string, string>; payload: Buffer | string }) {
  return app.http.inject({ method: 'POST', url: req.url, headers: { origin: ORIGIN, ...req.headers }, payload: req.payload })
}

test('/s/ takes every encoding posthog-js uses, with CORS, and the snapshots are stored by the 200', async (t) => {
  const app = await buildTestApp(t)
  for (const [name, encode] of Object.entries(ENCODINGS)) {
    const sessionId = `s-${crypto.randomUUID()}`
    const rrweb = aRecording(1_700_000_000_000)
    const res = await postSnapshots(app, encode(aSnapshotBatch(app.projectKey, sessionId, rrweb)))
    assert.equal(res.statusCode, 200, `${name}: ${res.body}`)
    assert.deepEqual(res.json(), { status: 1 })
    assert.equal(res.headers['access-control-allow-origin'], ORIGIN, name)
    const stored = await readSessionFile(app, sessionId)
    assert.deepEqual(stored.map(([, e]) => e), rrweb, name)
    assert.ok(stored.every(([w]) => w === `${sessionId}-w`), name)
  }
})

test('snapshot text is stored as sent: posthog-js packs gzip bytes as latin1 text, U+0000 included', async (t) => {
  const app = await buildTestApp(t)
  const rrweb = aRecording(1_700_000_000_000)
  const packed = String.fromCharCode(...gzipSync(Buffer.from('{"node":1}')))
  assert.ok(packed.includes('\u0000'))
  rrweb[1] = { ...rrweb[1]!, data: packed as unknown as Record<string, unknown>, cv: '2024-10' } as (typeof rrweb)[number]
  const res = await postSnapshots(app, ENCODINGS['gzip sniffed from the body, text/plain, no hint (posthog-js 1.4xx)']!(aSnapshotBatch(app.projectKey, 'packed', rrweb)))
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual((await readSessionFile(app, 'packed')).map(([, e]) => e), rrweb)
})

test('/s/ answers the CORS preflight', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.http.inject({ method: 'OPTIONS', url: '/s/', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } })
  assert.equal(res.statusCode, 200)
  assert.equal(res.headers['access-control-allow-origin'], ORIGIN)
  assert.match(String(res.headers['access-control-allow-methods']), /POST/)
})

test('a batch past the /s/ body bound is refused with 413, one under it is stored', async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_REPLAY_MAX_BODY_BYTES: String(256 * 1024) } })
  // Incompressible text, as a page's inlined images are: the body stays large once gzipped.
  const blob = (bytes: number) => randomBytes(bytes).toString('base64')
  const withBlob = (sessionId: string, bytes: number) => {
    const rrweb = aRecording(1_700_000_000_000)
    rrweb[1]!.data.blob = blob(bytes)
    return aSnapshotBatch(app.projectKey, sessionId, rrweb)
  }
  const big = await postSnapshots(app, ENCODINGS['gzip sniffed from the body, text/plain, no hint (posthog-js 1.4xx)']!(withBlob('too-big', 300 * 1024)))
  assert.equal(big.statusCode, 413, big.body)
  assert.equal(big.json().type, 'client_error')
  await assert.rejects(readSessionFile(app, 'too-big'), /ENOENT/)
  const fits = await postSnapshots(app, ENCODINGS['gzip sniffed from the body, text/plain, no hint (posthog-js 1.4xx)']!(withBlob('fits', 100 * 1024)))
  assert.equal(fits.statusCode, 200, fits.body)
  assert.equal((await readSessionFile(app, 'fits')).length, 6)
})

test('many large /s/ bodies at once under a small memory budget are all stored', async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_REPLAY_MEMORY_BUDGET_BYTES: String(64 * 1024) } })
  const bodies = Array.from({ length: 12 }, (_, i) => {
    const rrweb = aRecording(1_700_000_000_000 + i)
    rrweb[1]!.data.text = 'x'.repeat(200 * 1024)
    return { id: `big-${i}`, req: ENCODINGS['plain JSON']!(aSnapshotBatch(app.projectKey, `big-${i}`, rrweb)) }
  })
  const answers = await Promise.all(bodies.map((b) => postSnapshots(app, b.req)))
  assert.deepEqual(answers.map((r) => r.statusCode), bodies.map(() => 200))
  for (const b of bodies) assert.equal((await readSessionFile(app, b.id)).length, 6)
})

test('a $snapshot without $session_id or $snapshot_data is refused with PostHog\'s 400', async (t) => {
  const app = await buildTestApp(t)
  for (const [drop, attr] of [['$session_id', '$session_id'], ['$snapshot_data', '$snapshot_data']] as const) {
    const batch = aSnapshotBatch(app.projectKey, 'bad', aRecording(1_700_000_000_000))
    delete (batch[0]!.properties as Record<string, unknown>)[drop]
    const res = await postSnapshots(app, ENCODINGS['plain JSON']!(batch))
    assert.equal(res.statusCode, 400, res.body)
    assert.deepEqual(Object.keys(res.json()).sort(), ['attr', 'code', 'detail', 'type'])
    assert.equal(res.json().attr, attr)
  }
  const path = aSnapshotBatch(app.projectKey, '../../etc', aRecording(1_700_000_000_000))
  assert.equal((await postSnapshots(app, ENCODINGS['plain JSON']!(path))).statusCode, 400)
  const wrongKey = await postSnapshots(app, ENCODINGS['plain JSON']!(aSnapshotBatch('phc_unknown', 's1', aRecording(1))))
  assert.equal(wrongKey.statusCode, 401)
})

/**
 * posthog-js sends a `/s/` batch again, same body, when it saw no answer: its retry queue, or (seen in
 * the browser test under load) a fetch cut off by a navigation that had reached Tally, re-sent by the
 * unload beacon. The session must count it once.
 */
async function sentTwiceCountsOnce(app: TestApp) {
  const sessionId = `s-${crypto.randomUUID()}`
  const start = Date.now() - 600_000
  const first = aRecording(start, { clicks: 2 })
  const body = gzipSync(json(aSnapshotBatch(app.projectKey, sessionId, first)))
  const post = async (payload: Buffer) => {
    const res = await postSnapshots(app, { url: '/s/', headers: { 'content-type': 'text/plain' }, payload })
    assert.equal(res.statusCode, 200, res.body)
  }
  const recording = async () => (await listRecordings(app)).results.find((r) => r.id === sessionId)!
  // Twice at once (one worker batch), then once more after the worker wrote it (a later batch).
  await Promise.all([post(body), post(body)])
  assert.equal((await recording()).click_count, 2)
  await post(body)
  let r = await recording()
  assert.deepEqual([r.click_count, r.console_error_count, r.keypress_count], [2, 1, 1])

  // A different batch of the session still adds up.
  const later = aRecording(start + 60_000, { clicks: 1 }).slice(2)
  await post(gzipSync(json(aSnapshotBatch(app.projectKey, sessionId, later))))
  r = await recording()
  assert.deepEqual([r.click_count, r.console_error_count, r.keypress_count, r.recording_duration], [3, 2, 2, 80])
  const api = privateApi(app)
  const sources = (await api.get(`/session_recordings/${sessionId}/snapshots/`)).json().sources as unknown[]
  assert.equal(sources.length, 2)
  const lines = (await api.get(`/session_recordings/${sessionId}/snapshots/?source=blob_v2&start_blob_key=0&end_blob_key=1`)).body.trim().split('\n')
  assert.deepEqual(lines.map((l) => JSON.parse(l)[1]), [...first, ...later])
}

test('a /s/ batch sent again (same body) counts once: clicks, console errors, snapshots', async (t) => {
  await sentTwiceCountsOnce(await buildTestApp(t))
})

test('a /s/ batch sent again counts once on PostgreSQL with the bytes in the database', { skip: !TEST_POSTGRES_URL && 'needs TEST_POSTGRES_URL' }, async (t) => {
  await sentTwiceCountsOnce(await buildTestApp(t, { env: { TALLY_DATABASE_URL: await createTestDatabase(t) } }))
})
