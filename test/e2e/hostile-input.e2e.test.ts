import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, fileTestApps, type TestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { readAllEvents, waitForEvents } from '../helpers/capture-helpers.ts'

// One test per finding of the attacker probe (issue 7): each input once answered 500 (or poisoned the
// project); each must now answer the exact status, code and attr below, and leave the server healthy.

const deepArray = (n: number) => '['.repeat(n) + ']'.repeat(n)
const deepObject = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)

function post(app: TestApp, url: string, payload: string) {
  return app.http.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload })
}

function expectError(res: { statusCode: number; body: string }, status: number, code: string, attr: string | null) {
  assert.equal(res.statusCode, status, res.body)
  const body = JSON.parse(res.body) as { code: string; attr: string | null }
  assert.deepEqual({ code: body.code, attr: body.attr }, { code, attr }, res.body)
}

async function healthy(app: TestApp) {
  const res = await app.http.inject({ method: 'GET', url: '/_health' })
  assert.equal(res.statusCode, 200)
}

const filter = (...filters: object[]) => `/events/?properties=${encodeURIComponent(JSON.stringify(filters))}`

test('a lone surrogate or NUL anywhere in an event is stored as U+FFFD and every filtered read still answers', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  // Written as JSON escapes, as an attacker's raw body carries them.
  const body = `{"api_key":"${app.projectKey}","batch":[{"event":"poison\\ud800","distinct_id":"d\\udc00\\u0000","properties":{"p":"x\\udc00y","k\\ud800":"v","n":"a\\u0000b","nested":{"deep\\u0000":["\\udbff"]}}},{"event":"clean","distinct_id":"c","properties":{"p":"fine","*":"star","":"empty","a.b":"dot","~/":"pointer"}}]}`
  assert.equal((await post(app, '/batch/', body)).statusCode, 200)
  await waitForEvents(app, 2)
  for (const f of [
    { key: 'p', value: 'x', operator: 'icontains' },
    { key: 'p', value: 'fine' },
    { key: 'p', value: '^x', operator: 'regex' },
    { key: 'n', operator: 'is_set' },
    { key: 'p', value: 1, operator: 'gt' },
    { key: 'p', value: 1e300, operator: 'lt' }, // once bound as a BIGINT past int64: 500
    { key: 'p', value: '-1e308', operator: 'gte' },
    { key: '', value: 'x' }, // `$.""` was a binder error: 500
    { key: '*', operator: 'is_not_set' }, // `$."*"` was a wildcard
  ]) {
    const res = await api.get(filter(f))
    assert.equal(res.statusCode, 200, `${JSON.stringify(f)}: ${res.body}`)
  }
  const [poison] = await readAllEvents(app, { event: 'poison\uFFFD' })
  assert.ok(poison, 'the cleaned event name is found')
  assert.equal(poison.distinct_id, 'd\uFFFD\uFFFD')
  assert.deepEqual(poison.properties.nested, { 'deep\uFFFD': ['\uFFFD'] })
  assert.equal(poison.properties['k\uFFFD'], 'v')
  assert.equal(poison.properties.n, 'a\uFFFDb')
  assert.equal((await api.get(`/events/${poison.id}/`)).statusCode, 200)
  // Keys are matched literally, whatever JSON-path syntax they hold.
  for (const [key, value] of [['*', 'star'], ['', 'empty'], ['a.b', 'dot'], ['~/', 'pointer']]) {
    const res = await api.get(filter({ key, value }))
    assert.deepEqual(res.json().results.map((e: { event: string }) => e.event), ['clean'], `key ${JSON.stringify(key)}: ${res.body}`)
  }
  const byName = await api.get(filter({ key: 'p', value: 'x\uFFFDy' }))
  assert.deepEqual(byName.json().results.map((e: { event: string }) => e.event), ['poison\uFFFD'])
})

test('capture: a body nested 5,000 deep is a 400 invalid_payload for the whole request, and nothing of it is stored', async (t) => {
  const app = await buildTestApp(t)
  const body = `{"api_key":"${app.projectKey}","batch":[{"event":"ok","distinct_id":"d"},{"event":"e","distinct_id":"d","properties":{"p":${deepArray(5000)}}}]}`
  expectError(await post(app, '/batch/', body), 400, 'invalid_payload', null)
  // 128 levels, serde_json's limit, still pass: the event, properties and p make 3 of them.
  const atLimit = `{"api_key":"${app.projectKey}","event":"limit","distinct_id":"d","properties":{"p":${deepArray(126)}}}`
  assert.equal((await post(app, '/e/', atLimit)).statusCode, 200)
  expectError(await post(app, '/e/', atLimit.replace(deepArray(126), deepArray(127))), 400, 'invalid_payload', null)
  const stored = await waitForEvents(app, 1)
  assert.deepEqual(stored.map((e) => e.event), ['limit'])
  await healthy(app)
})

// The tests below share one app: they store no event, and the few records they create (a cohort, a
// dashboard) are none that another of them reads (no flags; ids they probe are never 1).
const sharedApp = fileTestApps()

test('/decide and /flags with a NUL or control character in api_key/token answer 401, never 500', async () => {
  const app = await sharedApp()
  for (const [url, field] of [['/decide/?v=3', 'api_key'], ['/flags/?v=2', 'token'], ['/decide/?v=4', 'token']] as const) {
    for (const key of ['phc_\u0000x', `${app.projectKey}\u0000`, 'phc_\u0007\u001b']) {
      const res = await post(app, url, JSON.stringify({ [field]: key, distinct_id: 'd' }))
      assert.equal(res.statusCode, 401, `${url} ${JSON.stringify(key)}: ${res.body}`)
    }
  }
  await healthy(app)
})

test('flags and insights with a 100,000-deep body answer 400 naming the field', async () => {
  const app = await sharedApp()
  const api = privateApi(app)
  expectError(await api.raw('POST', '/feature_flags/', `{"key":"k","filters":${deepObject(100_000)}}`), 400, 'invalid_input', 'filters')
  expectError(await api.raw('POST', '/insights/', `{"name":"i","query":${deepObject(100_000)}}`), 400, 'invalid_input', 'query')
  expectError(await api.raw('POST', '/dashboards/', `{"name":"d","filters":${deepArray(100_000)}}`), 400, 'invalid_input', 'filters')
  expectError(await api.raw('POST', '/cohorts/', `{"name":"c","groups":${deepArray(100_000)}}`), 400, 'invalid_input', 'groups')
  expectError(await api.raw('POST', '/actions/', `{"name":"a","steps":${deepArray(100_000)}}`), 400, 'invalid_input', 'steps')
  // A filter 200 levels deep (past the limit, within the stack) is refused the same way.
  expectError(await api.raw('POST', '/feature_flags/', `{"key":"k","filters":{"groups":[{"x":${deepArray(200)}}]}}`), 400, 'invalid_input', 'filters')
  assert.equal((await api.get('/feature_flags/')).json().results.length, 0)
  await healthy(app)
})

test('a static cohort CSV holding NUL answers 400 on csv', async () => {
  const app = await sharedApp()
  const api = privateApi(app)
  expectError(await api.post('/cohorts/', { name: 'st', is_static: true, csv: 'distinct_id\na\u0000b\n' }), 400, 'invalid_input', 'csv')
  const cohort = await api.post('/cohorts/', { name: 'st', is_static: true })
  assert.equal(cohort.statusCode, 201)
  expectError(await api.patch(`/cohorts/${cohort.json().id}/`, { csv: 'x\u0000' }), 400, 'invalid_input', 'csv')
})

test('ids past the 32-bit id columns are a 400 naming the field', async () => {
  const app = await sharedApp()
  const api = privateApi(app)
  expectError(await api.post('/dashboards/', { name: 'd', use_dashboard: 999999999999 }), 400, 'max_value', 'use_dashboard')
  const dash = await api.post('/dashboards/', { name: 'd' })
  expectError(await api.patch(`/dashboards/${dash.json().id}/`, { tiles: [{ id: 1e15 }] }), 400, 'max_value', 'tiles__0__id')
  expectError(await api.post('/insights/', { name: 'i', dashboards: [-1e12] }), 400, 'does_not_exist', 'dashboards')
})

test('events API: offset=1e20 and out-of-range limits are a 400 naming the parameter', async () => {
  const app = await sharedApp()
  const api = privateApi(app)
  expectError(await api.get('/events/?offset=1e20'), 400, 'invalid_input', 'offset')
  expectError(await api.get('/events/?offset=99999999999999999999'), 400, 'invalid_input', 'offset')
  expectError(await api.get('/events/?limit=-1'), 400, 'invalid_input', 'limit')
  assert.equal((await api.get('/events/?offset=1000000000000')).statusCode, 200)
  // UUIDs the route's pattern lets through reach DuckDB's ::UUID cast: they must cast.
  assert.equal((await api.get('/events/0123456789ABCDEF0123456789abcdef/')).statusCode, 404)
  assert.equal((await api.get('/events/?before=2030-01-01&before_uuid=0123456789abcdef0123456789abcdef')).statusCode, 200)
  expectError(await api.get('/events/?before_uuid=%00'), 400, 'invalid_input', 'before_uuid')
})

test('events API: after/before that the store could not cast are a 400 naming the parameter', async () => {
  const app = await sharedApp()
  const api = privateApi(app)
  for (const name of ['after', 'before']) {
    for (const v of ['1', '2030', 'Tue, 01 Jan 2030', '+275760-09-13T00:00:00.000Z', '10000-01-01T00:00:00Z', '2030-02-30T00:00:00Z']) {
      expectError(await api.get(`/events/?${name}=${encodeURIComponent(v)}`), 400, 'invalid_input', name)
    }
    for (const v of ['2030-01-01', '2030-01-01T00:00:00.123456+05:30', '0001-01-01T00:00:00Z', 'Tue, 01 Jan 2030 10:00:00 GMT']) {
      assert.equal((await api.get(`/events/?${name}=${encodeURIComponent(v)}`)).statusCode, 200, `${name}=${v}`)
    }
  }
})

test('events API: an invalid regex and an empty exact list are a 400 on properties', async () => {
  const app = await sharedApp()
  const api = privateApi(app)
  for (const f of [
    { key: 'p', value: '(', operator: 'regex' },
    { key: 'p', value: '[', operator: 'not_regex' },
    { key: 'p', value: [], operator: 'exact' },
    { key: 'p', value: [], operator: 'is_not' },
    { key: 'p', value: { a: 1 }, operator: 'exact' },
    { key: 'p', value: 'x', operator: 'gt' },
    { key: 'p', value: ['x'], operator: 'icontains' },
    { key: 'p', value: 'x', operator: 'nope' },
  ]) {
    expectError(await api.get(filter(f)), 400, 'invalid_input', 'properties')
  }
  await healthy(app)
})

test('hostile project ids and record ids in paths are a 4xx, never a 500', async () => {
  const app = await sharedApp()
  for (const project of ['1e20', '99999999999', '-1', '%00', '%ED%A0%80', '0x1', '1.5', '@current']) {
    for (const path of ['/events/', '/dashboards/', '/insights/', '/feature_flags/', '/cohorts/', '/actions/']) {
      const res = await app.http.inject({ method: 'GET', url: `/api/projects/${project}${path}`, headers: app.auth })
      assert.ok(res.statusCode < 500 && (project === '@current' || res.statusCode >= 400), `${project}${path}: ${res.statusCode} ${res.body}`)
    }
  }
  // (A path with an escape that is not UTF-8, such as %ED%A0%80, is Fastify's own 400 FST_ERR_BAD_URL before routing.)
  for (const id of ['1e20', '99999999999', '%00', '-1', '0x1', '1.5']) {
    for (const path of ['/events/', '/dashboards/', '/insights/', '/feature_flags/', '/cohorts/', '/actions/']) {
      const res = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}${path}${id}/`, headers: app.auth })
      assert.equal(res.statusCode, 404, `${path}${id}: ${res.body}`)
    }
  }
})

test('a path with a malformed %-escape answers 400 in PostHog error shape', async () => {
  const app = await sharedApp()
  for (const url of ['/e/%ED%A0%80', '/api/projects/%E0%A4%A/events/']) {
    const res = await app.http.inject({ url })
    assert.equal(res.statusCode, 400, url)
    assert.equal(res.json().type, 'invalid_request', url)
    assert.equal(typeof res.json().detail, 'string')
  }
})
