import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import { test } from 'node:test'
import { fileTestProjects, type TestApp } from '../helpers/test-app.ts'

// One app for the file, a project of its own per test: the counts and lists below are the test's own.
const project = fileTestProjects()

async function flag(app: TestApp, body: object) {
  const res = await app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/feature_flags/`, headers: app.auth, payload: body })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}
const decide = (app: TestApp, body: object, query = 'v=3') =>
  app.http.inject({ method: 'POST', url: `/decide/?${query}`, payload: { api_key: app.projectKey, ...body } })
const on = (key: string, extra: object = {}) => ({ key, filters: { groups: [{ properties: [], rollout_percentage: 100 }], ...extra } })
const personFlag = (key: string, prop: string, value: string) => ({
  key,
  filters: { groups: [{ properties: [{ key: prop, value, operator: 'exact', type: 'person' }], rollout_percentage: 100 }] },
})

test('decide: v1 lists enabled keys, v2 maps them to values, v3 adds false flags, payloads and both error flags', async () => {
  const app = await project()
  await flag(app, on('on', { payloads: { true: '{"a": 1}' } }))
  await flag(app, { key: 'off', filters: { groups: [{ properties: [], rollout_percentage: 0 }] } })
  await flag(app, on('mv', { multivariate: { variants: [{ key: 'only', rollout_percentage: 100 }] } }))
  const v1 = (await decide(app, { distinct_id: 'u1' }, '')).json()
  assert.deepEqual(v1.featureFlags.sort(), ['mv', 'on'])
  assert.deepEqual((await decide(app, { distinct_id: 'u1' }, 'v=2')).json().featureFlags, { on: true, mv: 'only' })
  const v3 = (await decide(app, { distinct_id: 'u1' })).json()
  assert.deepEqual(v3.featureFlags, { on: true, off: false, mv: 'only' })
  assert.deepEqual(v3.featureFlagPayloads, { on: '{"a": 1}' })
  assert.equal(v3.errorsWhileComputingFlags, false)
  assert.equal(v3.errorComputingFlags, false)
  assert.deepEqual(v3.supportedCompression, ['gzip', 'gzip-js', 'lz64'])
  assert.deepEqual(v3.config, { enable_collect_everything: true })
  assert.equal(v3.isAuthenticated, false)
})

test('decide: v4 and /flags?v=2 give the detailed flags map with reasons and metadata', async () => {
  const app = await project()
  const created = await flag(app, on('on', { payloads: { true: '{"a": 1}' } }))
  const v4 = (await decide(app, { distinct_id: 'u1' }, 'v=4')).json()
  const expected = {
    key: 'on',
    enabled: true,
    variant: null,
    reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
    metadata: { id: created.id, version: 1, description: null, payload: '{"a": 1}' },
  }
  assert.deepEqual(v4.flags.on, expected)
  const res = await app.http.inject({ method: 'POST', url: '/flags/?v=2', payload: { token: app.projectKey, distinct_id: 'u1' } })
  const body = res.json()
  assert.deepEqual(body.flags.on, expected)
  assert.equal(body.errorsWhileComputingFlags, false)
  assert.equal(typeof body.requestId, 'string')
  assert.equal(body.config, undefined)
  const noVersion = (await app.http.inject({ method: 'POST', url: '/flags', payload: { token: app.projectKey, distinct_id: 'u1' } })).json()
  assert.deepEqual(noVersion.flags.on, expected)
  assert.deepEqual(noVersion.supportedCompression, ['gzip', 'gzip-js', 'lz64'])
  const legacy = (await app.http.inject({ method: 'POST', url: '/flags/?v=1', payload: { token: app.projectKey, distinct_id: 'u1' } })).json()
  assert.deepEqual(legacy.featureFlags, { on: true })
})

test('decide: errors carry PostHog codes (no key, invalid key, missing distinct_id, malformed body)', async () => {
  const app = await project()
  const noKey = await app.http.inject({ method: 'POST', url: '/decide/', payload: { distinct_id: 'x' } })
  assert.equal(noKey.statusCode, 401)
  assert.equal(noKey.json().code, 'no_api_key')
  assert.equal(noKey.json().type, 'authentication_error')
  const bad = await app.http.inject({ method: 'POST', url: '/decide/', payload: { api_key: 'phc_nope', distinct_id: 'x' } })
  assert.equal(bad.statusCode, 401)
  assert.equal(bad.json().code, 'invalid_api_key')
  const missing = await decide(app, {})
  assert.equal(missing.statusCode, 400)
  assert.deepEqual(missing.json(), { type: 'validation_error', code: 'missing_distinct_id', detail: 'Decide requires a distinct_id.', attr: null })
  const malformed = await app.http.inject({ method: 'POST', url: '/decide/', headers: { 'content-type': 'application/json' }, payload: '{"api_key": ' })
  assert.equal(malformed.statusCode, 400)
  assert.equal(malformed.json().code, 'malformed_data')
  assert.match(malformed.json().detail, /^Malformed request data/)
})

test('decide: gzip, base64 and form bodies decode like capture', async () => {
  const app = await project()
  await flag(app, on('on'))
  const json = JSON.stringify({ token: app.projectKey, distinct_id: 'u1' })
  const bodies = [
    { url: '/flags/?v=2&compression=gzip-js', headers: { 'content-type': 'text/plain' }, payload: gzipSync(json) },
    { url: '/flags/?v=2', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `data=${encodeURIComponent(Buffer.from(json).toString('base64'))}` },
    { url: '/flags/?v=2&compression=base64', headers: { 'content-type': 'text/plain' }, payload: Buffer.from(json).toString('base64') },
  ]
  for (const b of bodies) {
    const res = await app.http.inject({ method: 'POST', ...b })
    assert.equal(res.statusCode, 200, `${b.url}: ${res.body}`)
    assert.equal(res.json().flags.on.enabled, true, b.url)
  }
})

test('decide: stored person properties are used and request overrides win over them', async () => {
  const app = await project()
  await flag(app, personFlag('pro-only', 'plan', 'pro'))
  await app.services.personData.upsertPersons(app.projectId, [{ distinctId: 'stored', properties: { plan: 'pro' } }])
  assert.equal((await decide(app, { distinct_id: 'stored' })).json().featureFlags['pro-only'], true)
  assert.equal((await decide(app, { distinct_id: 'stored', person_properties: { plan: 'free' } })).json().featureFlags['pro-only'], false)
  assert.equal((await decide(app, { distinct_id: 'other', person_properties: { plan: 'pro' } })).json().featureFlags['pro-only'], true)
})

test('decide: stored group properties are used for group flags', async () => {
  const app = await project()
  await app.services.groupTypes.ensureGroupTypes(app.projectId, ['company'])
  await flag(app, {
    key: 'gold',
    filters: {
      aggregation_group_type_index: 0,
      groups: [{ properties: [{ key: 'tier', value: 'gold', operator: 'exact', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }],
    },
  })
  await app.services.personData.upsertGroups(app.projectId, [{ groupTypeIndex: 0, groupKey: 'acme', properties: { tier: 'gold' } }])
  assert.equal((await decide(app, { distinct_id: 'u', groups: { company: 'acme' } })).json().featureFlags.gold, true)
  assert.equal((await decide(app, { distinct_id: 'u', groups: { company: 'other' } })).json().featureFlags.gold, false)
  assert.equal((await decide(app, { distinct_id: 'u' })).json().featureFlags.gold, false)
})

test('decide: static cohort members uploaded by distinct_id match cohort flags', async () => {
  const app = await project()
  const cohort = await app.http.inject({
    method: 'POST',
    url: `/api/projects/${app.projectId}/cohorts/`,
    headers: app.auth,
    payload: { name: 'VIP', is_static: true, csv: 'distinct_id\nvip-1\nvip-2' },
  })
  assert.equal(cohort.statusCode, 201, cohort.body)
  assert.equal(cohort.json().count, 2)
  await flag(app, { key: 'vip', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort.json().id }], rollout_percentage: 100 }] } })
  assert.equal((await decide(app, { distinct_id: 'vip-2' })).json().featureFlags.vip, true)
  assert.equal((await decide(app, { distinct_id: 'nobody' })).json().featureFlags.vip, false)
})

test('decide: experience continuity keeps the anonymous bucket after identify (first writer wins)', async () => {
  const app = await project()
  await flag(app, { key: 'cont', ensure_experience_continuity: true, filters: { groups: [{ properties: [], rollout_percentage: 50 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } } })
  await app.services.personData.upsertPersons(app.projectId, [{ distinctId: 'anon-1', properties: {} }, { distinctId: 'user-1', properties: {} }])
  const anonValue = (await decide(app, { distinct_id: 'anon-1' })).json().featureFlags.cont
  // The identify call carries the anonymous id; the stored override then keeps the value without it.
  for (let i = 0; i < 3; i++) {
    const first = (await decide(app, { distinct_id: 'user-1', $anon_distinct_id: 'anon-1' })).json().featureFlags.cont
    assert.equal(first, anonValue)
    assert.equal((await decide(app, { distinct_id: 'user-1' })).json().featureFlags.cont, anonValue)
    assert.equal((await decide(app, { distinct_id: 'user-1', $anon_distinct_id: `later-${i}` })).json().featureFlags.cont, anonValue)
  }
})

test('decide: disable_flags answers no flags; flag_keys_to_evaluate restricts them', async () => {
  const app = await project()
  await flag(app, on('a'))
  await flag(app, on('b'))
  assert.deepEqual((await decide(app, { distinct_id: 'u', disable_flags: true })).json().featureFlags, {})
  assert.deepEqual((await decide(app, { distinct_id: 'u', flag_keys_to_evaluate: ['b'] })).json().featureFlags, { b: true })
})

test('decide: a failed person read still answers the other flags and sets the error flag', async (t) => {
  const app = await project()
  await flag(app, on('plain'))
  await flag(app, personFlag('needs-person', 'plan', 'pro'))
  const reader = app.services.personData
  const original = reader.getPersons
  reader.getPersons = async () => {
    throw new Error('database down')
  }
  t.after(() => (reader.getPersons = original))
  const res = await decide(app, { distinct_id: 'u' })
  assert.equal(res.statusCode, 200)
  assert.deepEqual(res.json().featureFlags, { plain: true })
  assert.equal(res.json().errorsWhileComputingFlags, true)
  assert.equal(res.json().errorComputingFlags, true)
})

test('decide: a flag change is visible to the next request; inactive and deleted flags are left out', async () => {
  const app = await project()
  const f = await flag(app, on('moving'))
  assert.equal((await decide(app, { distinct_id: 'u' })).json().featureFlags.moving, true)
  const patch = (payload: object) =>
    app.http.inject({ method: 'PATCH', url: `/api/projects/${app.projectId}/feature_flags/${f.id}/`, headers: app.auth, payload })
  assert.equal((await patch({ filters: { groups: [{ properties: [], rollout_percentage: 0 }] } })).json().version, 2)
  assert.equal((await decide(app, { distinct_id: 'u' })).json().featureFlags.moving, false)
  await patch({ active: false })
  assert.equal('moving' in (await decide(app, { distinct_id: 'u' })).json().featureFlags, false)
  await patch({ active: true, deleted: true })
  assert.equal('moving' in (await decide(app, { distinct_id: 'u' })).json().featureFlags, false)
})

test('decide: GET answers the minimal config, OPTIONS answers CORS', async () => {
  const app = await project()
  const get = await app.http.inject({ url: '/decide/' })
  assert.equal(get.statusCode, 200)
  assert.deepEqual(get.json().featureFlags, {})
  const options = await app.http.inject({ method: 'OPTIONS', url: '/decide/', headers: { origin: 'https://app.example.com' } })
  assert.equal(options.statusCode, 200)
  assert.equal(options.headers['access-control-allow-origin'], 'https://app.example.com')
})
