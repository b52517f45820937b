import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { readAllEvents, waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { testOnEachEngine } from '../helpers/engines.ts'

const DAY = 86_400_000

// Events on both sides of a month boundary, so ClickHouse drops whole months and mutates the rest.
function eventAt(daysAgo: number, distinctId = 'u1') {
  return { uuid: randomUUID(), event: 'e', distinct_id: distinctId, timestamp: new Date(Date.now() - daysAgo * DAY).toISOString(), properties: { daysAgo } }
}

testOnEachEngine('retention: events older than event_retention_days are deleted within a check, the rest and other projects kept', async (t, engine) => {
  const app = await buildTestApp(t, { engine, env: { TALLY_RETENTION_CHECK_MS: '200' } })
  const api = privateApi(app)
  const other = await app.services.projects.createProject('Other')
  const ages = [1, 5, 29, 31, 45, 70, 100, 400]
  const mine = ages.map((d) => eventAt(d))
  // The other project shares some old months with this one (those cannot be dropped whole) and not others.
  const theirAges = [1, 5, 100]
  const theirs = theirAges.map((d) => eventAt(d, 'o1'))
  const send = (key: string, batch: object[]) => app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: key, batch } })
  assert.equal((await send(app.projectKey, mine)).statusCode, 200)
  assert.equal((await send(other.project.apiToken, theirs)).statusCode, 200)
  await waitForEvents(app, ages.length)
  assert.equal((await api.get('/')).json().event_retention_days, null)

  const patched = await api.patch('/', { event_retention_days: 30 })
  assert.equal(patched.statusCode, 200, patched.body)
  assert.equal(patched.json().event_retention_days, 30)
  const kept = await eventually(async () => {
    const events = await readAllEvents(app, { after: new Date(Date.now() - 1000 * DAY).toISOString() })
    return events.length === 3 && events
  }, 200)
  assert.deepEqual(kept.map((e) => e.properties.daysAgo).sort((a, b) => Number(a) - Number(b)), [1, 5, 29])
  const metrics = await eventually(async () => {
    const text = (await app.http.inject({ url: '/_metrics' })).body
    return /tally_retention_deleted_events_total 5\b/.test(text) && text
  })
  assert.match(metrics, /tally_retention_last_run_timestamp_seconds [1-9]/)
  // The other project keeps everything.
  const otherEvents = await app.http.inject({ url: `/api/projects/${other.project.id}/events/?limit=100&after=${encodeURIComponent(new Date(Date.now() - 1000 * DAY).toISOString())}`, headers: app.auth })
  assert.equal(otherEvents.json().results.length, theirAges.length)
  // Back to forever: nothing more is deleted.
  assert.equal((await api.patch('/', { event_retention_days: null })).json().event_retention_days, null)
})

testOnEachEngine('retention: the setting is validated', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const api = privateApi(app)
  for (const bad of [0, -1, 'x', 1.5, 100_000]) {
    const res = await api.patch('/', { event_retention_days: bad })
    assert.equal(res.statusCode, 400, String(bad))
    assert.equal(res.json().attr, 'event_retention_days')
  }
})
