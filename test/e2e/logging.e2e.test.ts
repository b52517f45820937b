import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { test, type TestContext } from 'node:test'
import { createApp } from '../../src/app/create-app.ts'
import { loadConfig } from '../../src/config/load-config.ts'
import { createLogger } from '../../src/shared/logger.ts'
import { testEnv } from '../helpers/test-app.ts'

/** A Tally whose log (the real logger, JSON lines) is collected in memory. */
async function appWithLog(t: TestContext, env: Record<string, string> = {}) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-log-'))
  const fullEnv = { ...testEnv(dataDir), TALLY_LOG_LEVEL: 'info', ...env }
  const config = loadConfig({}, fullEnv)
  let text = ''
  const sink = new Writable({ write: (chunk, _enc, done) => ((text += chunk.toString()), done()) })
  const app = await createApp(config, createLogger({ level: config.log.level, pretty: config.log.format === 'pretty', destination: sink }))
  t.after(async () => {
    await app.close()
    await rm(dataDir, { recursive: true, force: true })
  })
  const lines = () => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>)
  return { app, projectKey: fullEnv.TALLY_PROJECT_API_KEY, personalKey: fullEnv.TALLY_PERSONAL_API_KEY, text: () => text, lines }
}

test('logs: one line per private request with its request id; no API key, cookie or event property anywhere', async (t) => {
  const { app, projectKey, personalKey, text, lines } = await appWithLog(t)
  const auth = { authorization: `Bearer ${personalKey}`, cookie: 'sessionid=cookie-secret' }
  const listed = await app.http.inject({ method: 'GET', url: '/api/projects/@current/', headers: { ...auth, 'x-request-id': 'client-chosen-id' } })
  assert.equal(listed.statusCode, 200)
  assert.equal(listed.headers['x-request-id'], 'client-chosen-id')
  await app.http.inject({ method: 'GET', url: `/api/projects/@current/?personal_api_key=${personalKey}` })
  await app.http.inject({ method: 'GET', url: `/flags/definitions?token=${projectKey}`, headers: auth })
  await app.http.inject({ method: 'GET', url: `/array/${projectKey}/config`, headers: auth })
  const event = { api_key: projectKey, event: 'e', distinct_id: 'u1', properties: { secret: 'property-secret' } }
  assert.equal((await app.http.inject({ method: 'POST', url: '/e/', payload: event })).statusCode, 200)
  const data = Buffer.from(JSON.stringify(event)).toString('base64')
  assert.equal((await app.http.inject({ method: 'GET', url: `/e/?data=${encodeURIComponent(data)}` })).statusCode, 200)
  assert.equal((await app.http.inject({ method: 'POST', url: '/e/', payload: { ...event, api_key: 'phc_wrong' } })).statusCode, 401)

  const log = text()
  for (const secret of [projectKey, personalKey, projectKey.slice(4), personalKey.slice(4), 'cookie-secret', 'property-secret']) {
    assert.ok(!log.includes(secret), `the log contains ${secret}`)
  }
  const requests = lines().filter((l) => l.msg === 'request')
  const first = requests.find((l) => l.reqId === 'client-chosen-id')
  assert.ok(first, 'the private request is logged with the client request id')
  assert.equal(first.status, 200)
  assert.equal(first.level, 30)
  assert.ok(requests.some((l) => l.url === '/api/projects/@current/?personal_api_key=phx_[redacted]'))
  assert.ok(requests.some((l) => l.url === '/flags/definitions?token=phc_[redacted]'))
  // Public successes are below info by default; public errors are always logged.
  assert.ok(!requests.some((l) => l.url === '/e/' && l.status === 200))
  assert.ok(requests.some((l) => l.url === '/e/' && l.status === 401))
})

test('logs: public successes at TALLY_LOG_PUBLIC_SUCCESS_LEVEL, without the query string', async (t) => {
  const { app, projectKey, lines } = await appWithLog(t, { TALLY_LOG_PUBLIC_SUCCESS_LEVEL: 'info' })
  const data = Buffer.from(JSON.stringify({ api_key: projectKey, event: 'e', distinct_id: 'u1' })).toString('base64')
  assert.equal((await app.http.inject({ method: 'GET', url: `/e/?data=${encodeURIComponent(data)}` })).statusCode, 200)
  const line = lines().find((l) => l.msg === 'request' && l.status === 200)
  assert.ok(line)
  assert.equal(line.url, '/e/')
  assert.equal(typeof line.reqId, 'string')
})

test('logs: pretty format gives readable lines that still carry the request id and redact keys', async (t) => {
  const { app, personalKey, text } = await appWithLog(t, { TALLY_LOG_FORMAT: 'pretty' })
  await app.http.inject({ method: 'GET', url: `/api/projects/@current/?personal_api_key=${personalKey}`, headers: { 'x-request-id': 'pretty-id' } })
  const log = text()
  assert.ok(!log.trimStart().startsWith('{'), 'not JSON')
  assert.match(log, /pretty-id/)
  assert.match(log, /personal_api_key=phx_\[redacted\]/)
  assert.ok(!log.includes(personalKey))
})

test('logs: a failed person read in /decide is logged as a warning of module decide', async (t) => {
  const { app, projectKey, personalKey, lines } = await appWithLog(t)
  const created = await app.http.inject({
    method: 'POST',
    url: '/api/projects/@current/feature_flags/',
    headers: { authorization: `Bearer ${personalKey}` },
    payload: { key: 'needs-person', filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 }] } },
  })
  assert.equal(created.statusCode, 201, created.body)
  const reader = app.services.personData
  const original = reader.getPersons
  reader.getPersons = async () => {
    throw new Error('database down')
  }
  t.after(() => (reader.getPersons = original))
  const res = await app.http.inject({ method: 'POST', url: '/decide/?v=3', payload: { api_key: projectKey, distinct_id: 'u' } })
  assert.equal(res.json().errorsWhileComputingFlags, true)
  const warning = lines().find((l) => l.module === 'decide' && l.level === 40)
  assert.ok(warning, 'a warning from module decide')
  assert.match(String((warning.err as { message?: string }).message), /database down/)
})
