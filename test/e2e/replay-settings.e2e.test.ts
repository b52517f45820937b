import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'

async function patchProject(app: TestApp, payload: Record<string, unknown>) {
  return app.http.inject({ method: 'PATCH', url: `/api/projects/${app.projectId}/`, headers: app.auth, payload })
}

/** `sessionRecording` as each remote-config route serves it to posthog-js. */
async function remoteConfigs(app: TestApp) {
  const body = { token: app.projectKey, distinct_id: 'u1' }
  const decide = await app.http.inject({ method: 'POST', url: '/decide/?v=4', payload: body })
  const flags = await app.http.inject({ method: 'POST', url: '/flags/?v=2&config=true', payload: body })
  const config = await app.http.inject({ method: 'GET', url: `/array/${app.projectKey}/config` })
  const script = await app.http.inject({ method: 'GET', url: `/array/${app.projectKey}/config.js` })
  const fromScript = JSON.parse(/=(\{"config".*\});\}\)\(\);$/.exec(script.body)![1]!).config
  return [decide.json().sessionRecording, flags.json().sessionRecording, config.json().sessionRecording, fromScript.sessionRecording]
}

test('the remote config sends sessionRecording false until session_recording_opt_in is on', async (t) => {
  const app = await buildTestApp(t)
  const project = (await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/`, headers: app.auth })).json()
  assert.equal(project.session_recording_opt_in, false)
  assert.equal(project.capture_console_log_opt_in, true)
  assert.equal(project.session_recording_retention_period, '30d')
  assert.deepEqual(await remoteConfigs(app), [false, false, false, false])
})

test('the replay settings of the project come out in every remote config as PostHog sends them', async (t) => {
  const app = await buildTestApp(t)
  const res = await patchProject(app, {
    session_recording_opt_in: true,
    session_recording_sample_rate: '0.5',
    session_recording_minimum_duration_milliseconds: 2000,
    session_recording_linked_flag: { id: 3, key: 'beta', variant: 'test' },
    capture_console_log_opt_in: false,
    session_recording_network_payload_capture_config: { recordHeaders: true, recordBody: false },
    session_recording_masking_config: { maskAllInputs: true, maskTextSelector: '.secret' },
    session_recording_retention_period: '90d',
  })
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.json().session_recording_sample_rate, '0.50')
  assert.equal(res.json().session_recording_retention_period, '90d')
  const expected = {
    endpoint: '/s/',
    consoleLogRecordingEnabled: false,
    recorderVersion: 'v2',
    sampleRate: '0.50',
    minimumDurationMilliseconds: 2000,
    linkedFlag: { flag: 'beta', variant: 'test' },
    networkPayloadCapture: { recordHeaders: true, recordBody: false },
    masking: { maskAllInputs: true, maskTextSelector: '.secret' },
    urlTriggers: [],
    urlBlocklist: [],
    eventTriggers: [],
    triggerMatchType: null,
    scriptConfig: null,
  }
  for (const got of await remoteConfigs(app)) assert.deepEqual(got, expected)
  // A full sample rate is sent as null, a linked flag without variant as its key (PostHog's decide.py).
  await patchProject(app, { session_recording_sample_rate: '1.00', session_recording_linked_flag: { key: 'beta' } })
  const [after] = await remoteConfigs(app)
  assert.equal(after.sampleRate, null)
  assert.equal(after.linkedFlag, 'beta')
  assert.equal(after.minimumDurationMilliseconds, 2000)
  await patchProject(app, { session_recording_opt_in: false })
  assert.deepEqual(await remoteConfigs(app), [false, false, false, false])
})

test('bad replay settings get a 400 naming the field', async (t) => {
  const app = await buildTestApp(t)
  for (const [field, value] of [
    ['session_recording_sample_rate', '1.5'],
    ['session_recording_sample_rate', 'half'],
    ['session_recording_minimum_duration_milliseconds', -1],
    ['session_recording_linked_flag', 'beta'],
    ['session_recording_retention_period', '2d'],
    ['session_recording_opt_in', 'maybe'],
  ] as const) {
    const res = await patchProject(app, { [field]: value })
    assert.equal(res.statusCode, 400, `${field}=${value}: ${res.body}`)
    assert.equal(res.json().type, 'validation_error')
    assert.equal(res.json().attr, field)
  }
})
