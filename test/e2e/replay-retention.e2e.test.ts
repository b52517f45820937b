import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { privateApi } from '../helpers/private-api.ts'
import { aRecording, listRecordings, postRecording, readSessionFile } from '../helpers/replay.ts'

const DAY = 86_400_000

const ids = async (app: TestApp) => (await listRecordings(app, { date_from: 'all' })).results.map((r) => r.id).sort()

test('recordings past the project retention (30 days by default) are deleted with their files', async (t) => {
  const app = await buildTestApp(t)
  const now = Date.now()
  await postRecording(app, 'old', aRecording(now - 40 * DAY))
  await postRecording(app, 'young', aRecording(now - 20 * DAY))
  assert.deepEqual(await ids(app), ['old', 'young'])
  assert.equal(await app.replay.runRetention(new Date(now)), 1)
  assert.deepEqual(await ids(app), ['young'])
  await assert.rejects(readSessionFile(app, 'old'), /ENOENT/)
  assert.equal((await readSessionFile(app, 'young')).length, 6)
  // A longer retention keeps it: 90 days.
  assert.equal((await privateApi(app).patch('/', { session_recording_retention_period: '90d' })).statusCode, 200)
  assert.equal(await app.replay.runRetention(new Date(now + 30 * DAY)), 0)
  assert.deepEqual(await ids(app), ['young'])
  assert.equal(await app.replay.runRetention(new Date(now + 71 * DAY)), 1)
  assert.deepEqual(await ids(app), [])
})

test('deleting a person with delete_recordings=true removes their recordings, and only theirs', async (t) => {
  const app = await buildTestApp(t)
  await app.http.inject({
    method: 'POST',
    url: '/batch/',
    payload: { api_key: app.projectKey, batch: [{ event: '$identify', distinct_id: 'dana', properties: { $anon_distinct_id: 'anon-d' } }, { event: 'x', distinct_id: 'erin' }] },
  })
  const events = await waitForEvents(app, 2)
  const dana = events.find((e) => e.distinct_id === 'dana')!.person as { uuid?: string; id?: string }
  const now = Date.now()
  await postRecording(app, 'dana-anon', aRecording(now - 60_000), { distinctId: 'anon-d' })
  await postRecording(app, 'dana-known', aRecording(now - 60_000), { distinctId: 'dana' })
  await postRecording(app, 'erin-1', aRecording(now - 60_000), { distinctId: 'erin' })
  assert.deepEqual(await ids(app), ['dana-anon', 'dana-known', 'erin-1'])
  const res = await privateApi(app).delete(`/persons/${dana.uuid ?? dana.id}/?delete_recordings=true`)
  assert.equal(res.statusCode, 202, res.body)
  assert.deepEqual(await ids(app), ['erin-1'])
  await assert.rejects(readSessionFile(app, 'dana-known'), /ENOENT/)
  await assert.rejects(readSessionFile(app, 'dana-anon'), /ENOENT/)
})

test('deleting a person without delete_recordings keeps their recordings', async (t) => {
  const app = await buildTestApp(t)
  await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch: [{ event: 'x', distinct_id: 'finn' }] } })
  const [event] = await waitForEvents(app, 1)
  const finn = event!.person as { uuid?: string; id?: string }
  await postRecording(app, 'finn-1', aRecording(Date.now() - 60_000), { distinctId: 'finn' })
  await listRecordings(app)
  assert.equal((await privateApi(app).delete(`/persons/${finn.uuid ?? finn.id}/`)).statusCode, 202)
  assert.deepEqual(await ids(app), ['finn-1'])
})
