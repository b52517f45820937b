import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { eventually } from '../helpers/eventually.ts'

const SDK_DEFAULTS = {
  autocapture_opt_out: null,
  autocapture_exceptions_opt_in: null,
  autocapture_web_vitals_opt_in: null,
  capture_performance_opt_in: true,
  capture_console_log_opt_in: true,
  capture_dead_clicks: false,
  heatmaps_opt_in: null,
}
const ALL_ON = {
  autocapture_opt_out: true,
  autocapture_exceptions_opt_in: true,
  autocapture_web_vitals_opt_in: true,
  capture_performance_opt_in: false,
  capture_console_log_opt_in: false,
  capture_dead_clicks: true,
  heatmaps_opt_in: true,
}

const project = (app: TestApp, id: number | string = app.projectId) => app.http.inject({ url: `/api/projects/${id}/`, headers: app.auth })
const patch = (app: TestApp, payload: object) => app.http.inject({ method: 'PATCH', url: `/api/projects/${app.projectId}/`, headers: app.auth, payload })
const pick = (body: Record<string, unknown>, keys: object) => Object.fromEntries(Object.keys(keys).map((k) => [k, body[k]]))

/** The remote config each route sends posthog-js: /array/<token>/config, /flags?config=true and /decide?v=3. */
async function configs(app: TestApp, token = app.projectKey) {
  const array = (await app.http.inject({ url: `/array/${token}/config` })).json()
  const flags = (await app.http.inject({ method: 'POST', url: '/flags/?v=2&config=true', payload: { token, distinct_id: 'u1' } })).json()
  const decide = (await app.http.inject({ method: 'POST', url: '/decide/?v=3', payload: { token, distinct_id: 'u1' } })).json()
  return { array, flags, decide }
}

test('a project shows PostHog\'s SDK settings with PostHog\'s defaults, and PATCH round-trips them', async (t) => {
  const app = await buildTestApp(t)
  assert.deepEqual(pick((await project(app)).json(), SDK_DEFAULTS), SDK_DEFAULTS)
  const res = await patch(app, ALL_ON)
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual(pick(res.json(), ALL_ON), ALL_ON)
  assert.deepEqual(pick((await project(app)).json(), ALL_ON), ALL_ON)
  // Partial PATCH changes only what it names; null is PostHog's "unset".
  const again = await patch(app, { heatmaps_opt_in: null, capture_dead_clicks: 'false' })
  assert.deepEqual(pick(again.json(), ALL_ON), { ...ALL_ON, heatmaps_opt_in: null, capture_dead_clicks: false })
})

test('PATCH of a project ignores keys Tally does not know or honour, as PostHog\'s serializer does', async (t) => {
  const app = await buildTestApp(t)
  const before = (await project(app)).json()
  const res = await patch(app, { made_up_setting: 1, surveys_opt_in: true, week_start_day: 1, name: 'Shop' })
  assert.equal(res.statusCode, 200, res.body)
  const after = (await project(app)).json()
  assert.equal(after.name, 'Shop')
  assert.equal(after.made_up_setting, undefined)
  assert.equal(after.surveys_opt_in, undefined)
  assert.equal(after.week_start_day, before.week_start_day)
})

test('a setting that is not a boolean is a 400 naming it', async (t) => {
  const app = await buildTestApp(t)
  const res = await patch(app, { heatmaps_opt_in: 'sometimes' })
  assert.equal(res.statusCode, 400)
  assert.deepEqual({ code: res.json().code, attr: res.json().attr }, { code: 'invalid_input', attr: 'heatmaps_opt_in' })
})

test('remote config is off by PostHog\'s defaults and follows each project setting in PostHog\'s shapes', async (t) => {
  const app = await buildTestApp(t)
  const off = await configs(app)
  for (const [where, c] of Object.entries(off)) {
    assert.equal(c.autocaptureExceptions, false, where)
    assert.equal(c.heatmaps, false, where)
    assert.equal(c.captureDeadClicks, false, where)
    assert.equal(c.autocapture_opt_out, false, where)
    assert.deepEqual(c.capturePerformance, { network_timing: true, web_vitals: false, web_vitals_allowed_metrics: null }, where)
  }
  assert.equal((await patch(app, ALL_ON)).statusCode, 200)
  const on = await configs(app)
  for (const [where, c] of Object.entries(on)) {
    assert.equal(c.heatmaps, true, where)
    assert.equal(c.captureDeadClicks, true, where)
    assert.equal(c.autocapture_opt_out, true, where)
    assert.deepEqual(c.capturePerformance, { network_timing: false, web_vitals: true, web_vitals_allowed_metrics: null }, where)
  }
  // /decide as posthog/api/decide.py; the remote config as posthog/models/remote_config.py.
  assert.deepEqual(on.decide.autocaptureExceptions, { endpoint: '/e/' })
  for (const c of [on.array, on.flags]) {
    assert.equal(c.autocaptureExceptions, true)
    assert.deepEqual(c.errorTracking, { autocaptureExceptions: true, suppressionRules: [] })
  }
  const script = (await app.http.inject({ url: `/array/${app.projectKey}/config.js` })).body
  assert.match(script, /"autocaptureExceptions":true/)
  assert.equal((await patch(app, { capture_performance_opt_in: false, autocapture_web_vitals_opt_in: false })).statusCode, 200)
  assert.equal((await configs(app)).array.capturePerformance, false)
})

test('ingested_event turns true once the project has an event', async (t) => {
  const app = await buildTestApp(t)
  assert.equal((await project(app)).json().ingested_event, false)
  assert.equal((await app.http.inject({ url: '/api/projects/', headers: app.auth })).json().results[0].ingested_event, false)
  const res = await app.http.inject({ method: 'POST', url: '/e/', payload: { api_key: app.projectKey, event: 'installed', distinct_id: 'u1' } })
  assert.equal(res.statusCode, 200)
  await eventually(async () => (await project(app)).json().ingested_event === true)
  assert.equal((await app.http.inject({ url: '/api/projects/', headers: app.auth })).json().results[0].ingested_event, true)
})

test('POST /api/projects/ creates a project with its own API key that capture and /decide accept', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.http.inject({ method: 'POST', url: '/api/projects/', headers: app.auth, payload: { name: 'Mobile app', timezone: 'Europe/Paris', heatmaps_opt_in: true } })
  assert.equal(res.statusCode, 201, res.body)
  const created = res.json()
  assert.equal(created.name, 'Mobile app')
  assert.equal(created.timezone, 'Europe/Paris')
  assert.equal(created.heatmaps_opt_in, true)
  assert.equal(created.ingested_event, false)
  assert.match(created.api_token, /^phc_/)
  assert.notEqual(created.api_token, app.projectKey)
  assert.notEqual(created.id, app.projectId)
  assert.equal((await project(app, created.id)).statusCode, 200)
  const list = (await app.http.inject({ url: '/api/projects/', headers: app.auth })).json()
  assert.deepEqual(list.results.map((p: { id: number }) => p.id), [app.projectId, created.id])
  assert.equal((await configs(app, created.api_token)).array.heatmaps, true)
  const capture = await app.http.inject({ method: 'POST', url: '/e/', payload: { api_key: created.api_token, event: 'first', distinct_id: 'm1' } })
  assert.equal(capture.statusCode, 200)
  await eventually(async () => (await project(app, created.id)).json().ingested_event === true)
  assert.equal((await project(app)).json().ingested_event, false, 'the event went to the new project only')
})

test('POST /api/organizations/@current/projects/ creates a project; another organization or a member is refused', async (t) => {
  const app = await buildTestApp(t)
  const org = (await project(app)).json().organization
  for (const ref of ['@current', org]) {
    const res = await app.http.inject({ method: 'POST', url: `/api/organizations/${ref}/projects/`, headers: app.auth, payload: { name: `Via ${ref}` } })
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().organization, org)
  }
  const other = await app.http.inject({ method: 'POST', url: '/api/organizations/00000000-0000-0000-0000-000000000000/projects/', headers: app.auth, payload: { name: 'x' } })
  assert.equal(other.statusCode, 404)
  const member = await app.services.projects.createUser({ email: 'member@x.io', firstName: 'M', projectIds: [app.projectId] })
  const refused = await app.http.inject({ method: 'POST', url: '/api/projects/', headers: { authorization: `Bearer ${member.key}` }, payload: { name: 'Nope' } })
  assert.equal(refused.statusCode, 403)
  assert.equal(refused.json().code, 'permission_denied')
  const bad = await app.http.inject({ method: 'POST', url: '/api/projects/', headers: app.auth, payload: { name: 'Bad zone', timezone: 'Mars/Olympus' } })
  assert.equal(bad.statusCode, 400)
  const names = (await app.http.inject({ url: '/api/projects/', headers: app.auth })).json().results.map((p: { name: string }) => p.name)
  assert.ok(!names.includes('Bad zone'), 'a refused create leaves no project behind')
})
