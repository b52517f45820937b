import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { privateApi, strangerWithProject } from '../helpers/private-api.ts'
import { aRecording, listRecordings, postRecording, readSessionFile } from '../helpers/replay.ts'

const MINUTE = 60_000
/** Recent start times (the list's default range is PostHog's last 3 days). */
const recent = (minutesAgo: number) => Date.now() - minutesAgo * MINUTE

async function captureEvents(app: TestApp, batch: object[]) {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
}

test('a recording sent in two requests is listed with its duration, counts, first URL and person', async (t) => {
  const app = await buildTestApp(t)
  await captureEvents(app, [{ event: '$pageview', distinct_id: 'alice', properties: { $set: { email: 'alice@example.com' } } }])
  await waitForEvents(app, 1)
  const start = recent(30)
  const first = aRecording(start, { href: 'https://shop.example.com/cart', clicks: 2 })
  const second = aRecording(start + 40_000, { href: 'https://shop.example.com/pay', clicks: 3 })
  await postRecording(app, 'rec-1', first, { distinctId: 'alice' })
  await postRecording(app, 'rec-1', second, { distinctId: 'alice' })
  const { results, has_next } = await listRecordings(app)
  assert.equal(has_next, false)
  assert.equal(results.length, 1)
  const r = results[0]!
  assert.equal(r.id, 'rec-1')
  assert.equal(r.distinct_id, 'alice')
  assert.equal(r.recording_duration, 60) // first event at start, last (the scroll of the 2nd batch) at start + 60 s
  assert.equal(r.click_count, 5)
  assert.equal(r.keypress_count, 2)
  assert.equal(r.console_error_count, 2)
  assert.equal(r.start_url, 'https://shop.example.com/cart')
  assert.equal(r.start_time, new Date(start).toISOString())
  assert.equal(r.person.properties.email, 'alice@example.com')
  assert.ok(r.active_seconds >= 1 && r.active_seconds < r.recording_duration, String(r.active_seconds))
  const one = await privateApi(app).get('/session_recordings/rec-1/')
  assert.equal(one.statusCode, 200)
  assert.deepEqual(one.json(), { ...r, recording_ttl: one.json().recording_ttl })
})

test('snapshots list their blob_v2 sources, then serve the blocks as [windowId, event] lines', async (t) => {
  const app = await buildTestApp(t)
  const start = recent(10)
  const a = aRecording(start)
  const b = aRecording(start + 30_000)
  await postRecording(app, 'rec-s', a, { windowId: 'win-a' })
  await postRecording(app, 'rec-s', b, { windowId: 'win-b' })
  await listRecordings(app)
  const api = privateApi(app)
  const sources = (await api.get('/session_recordings/rec-s/snapshots/')).json().sources
  assert.deepEqual(sources.map((s: { source: string; blob_key: string }) => [s.source, s.blob_key]), [['blob_v2', '0'], ['blob_v2', '1']])
  assert.equal(sources[0].start_timestamp, new Date(start).toISOString())
  const lines = (body: string) => body.trim().split('\n').map((l) => JSON.parse(l))
  const blockOne = await api.get('/session_recordings/rec-s/snapshots/?source=blob_v2&blob_key=1')
  assert.equal(blockOne.statusCode, 200)
  assert.deepEqual(lines(blockOne.body), b.map((e) => ['win-b', e]))
  const both = await api.get('/session_recordings/rec-s/snapshots/?source=blob_v2&start_blob_key=0&end_blob_key=1')
  assert.deepEqual(lines(both.body), [...a.map((e) => ['win-a', e]), ...b.map((e) => ['win-b', e])])
  assert.equal((await api.get('/session_recordings/rec-s/snapshots/?source=blob_v2&blob_key=2')).statusCode, 404)
  assert.equal((await api.get('/session_recordings/rec-s/snapshots/?source=realtime')).statusCode, 400)
  assert.equal((await api.get('/session_recordings/nope/snapshots/')).statusCode, 404)
})

test('the list filters by duration, console errors, person, events performed, date range, and pages', async (t) => {
  const app = await buildTestApp(t)
  await captureEvents(app, [
    { event: 'checkout', distinct_id: 'bob', properties: { $session_id: 'long', plan: 'pro' } },
    { event: 'checkout', distinct_id: 'carol', properties: { $session_id: 'short', plan: 'free' } },
  ])
  const events = await waitForEvents(app, 2)
  const bob = (events.find((e) => e.distinct_id === 'bob')!.person as { uuid?: string; id?: string })
  await postRecording(app, 'long', aRecording(recent(60)), { distinctId: 'bob' })
  const quiet = aRecording(recent(30)).filter((e) => e.type !== 6).slice(0, 3) // no console error, 1 s long
  await postRecording(app, 'short', quiet, { distinctId: 'carol' })
  await postRecording(app, 'old', aRecording(Date.now() - 10 * 24 * 60 * MINUTE), { distinctId: 'carol' })
  const ids = async (q: Record<string, string>) => (await listRecordings(app, q)).results.map((r) => r.id)
  assert.deepEqual(await ids({}), ['short', 'long'])
  assert.deepEqual(await ids({ date_from: '-30d' }), ['short', 'long', 'old'])
  assert.deepEqual(await ids({ date_from: '-30d', date_to: '-5d' }), ['old'])
  assert.deepEqual(await ids({ having_predicates: JSON.stringify([{ type: 'recording', key: 'duration', operator: 'gt', value: 10 }]) }), ['long'])
  assert.deepEqual(await ids({ session_recording_duration: JSON.stringify({ type: 'recording', key: 'duration', operator: 'lt', value: 10 }) }), ['short'])
  assert.deepEqual(await ids({ console_log_filters: JSON.stringify([{ key: 'level', value: ['error'], operator: 'exact', type: 'log_entry' }]) }), ['long'])
  assert.deepEqual(await ids({ person_uuid: String(bob.uuid ?? bob.id) }), ['long'])
  const performed = (props: object[]) => ids({ events: JSON.stringify([{ id: 'checkout', type: 'events', properties: props }]) })
  assert.deepEqual(await performed([]), ['short', 'long'])
  assert.deepEqual(await performed([{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }]), ['long'])
  const page1 = await listRecordings(app, { date_from: '-30d', limit: '2' })
  const page2 = await listRecordings(app, { date_from: '-30d', limit: '2', offset: '2' })
  assert.deepEqual([page1.has_next, page2.has_next], [true, false])
  assert.deepEqual([...page1.results, ...page2.results].map((r) => r.id), ['short', 'long', 'old'])
  const bads: Record<string, string>[] = [{ having_predicates: '[{"key":"nope","operator":"gt","value":1}]' }, { events: '{' }, { order: 'x' }, { person_uuid: 'x' }]
  for (const bad of bads) {
    const res = await privateApi(app).get(`/session_recordings/?${new URLSearchParams(bad)}`)
    assert.equal(res.statusCode, 400, JSON.stringify(bad))
    assert.equal(res.json().type, 'validation_error')
  }
})

test('a recording is never served to another project\'s key or member', async (t) => {
  const app = await buildTestApp(t)
  const stranger = await strangerWithProject(app)
  const strangerKey = (await app.services.projects.listProjects()).find((p) => p.id === stranger.projectId)!.apiToken
  await postRecording(app, 'mine', aRecording(recent(5)))
  await postRecording(app, 'shared-id', aRecording(recent(5), { clicks: 1 }))
  await postRecording(app, 'shared-id', aRecording(recent(4), { clicks: 4 }), { token: strangerKey })
  await listRecordings(app)
  const theirs = privateApi(app, stranger.headers, stranger.projectId)
  assert.deepEqual((await listRecordings(app, {}, stranger.headers, stranger.projectId)).results.map((r) => [r.id, r.click_count]), [['shared-id', 4]])
  assert.equal((await theirs.get('/session_recordings/mine/')).statusCode, 404)
  assert.equal((await theirs.get('/session_recordings/mine/snapshots/')).statusCode, 404)
  assert.equal((await theirs.get('/session_recordings/mine/snapshots/?source=blob_v2&blob_key=0')).statusCode, 404)
  assert.equal((await theirs.delete('/session_recordings/mine/')).statusCode, 404)
  const intoMine = privateApi(app, stranger.headers)
  assert.equal((await intoMine.get('/session_recordings/')).statusCode, 404)
  assert.equal((await intoMine.get('/session_recordings/mine/')).statusCode, 404)
  const mineShared = await privateApi(app).get('/session_recordings/shared-id/')
  assert.equal(mineShared.json().click_count, 1)
})

test('DELETE removes the recording and its file', async (t) => {
  const app = await buildTestApp(t)
  await postRecording(app, 'gone', aRecording(recent(5)))
  await postRecording(app, 'kept', aRecording(recent(5)))
  await listRecordings(app)
  const api = privateApi(app)
  assert.equal((await api.delete('/session_recordings/gone/')).statusCode, 204)
  assert.equal((await api.get('/session_recordings/gone/')).statusCode, 404)
  assert.equal((await api.delete('/session_recordings/gone/')).statusCode, 404)
  await assert.rejects(readSessionFile(app, 'gone'), /ENOENT/)
  assert.deepEqual((await listRecordings(app)).results.map((r) => r.id), ['kept'])
})
