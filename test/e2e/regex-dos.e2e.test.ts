import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'

// With a backtracking engine, `^(a+)+$` against 32 `a`s and a `!` took 21 s and froze the process;
// each extra character doubles it. Against 10,000 characters it would never answer.
const HOSTILE = `${'a'.repeat(10_000)}!`
const regexCondition = (operator = 'regex') => ({ key: 'name', operator, value: '^(a+)+$', type: 'person' })

test('a catastrophic flag regex on a 10,000-character person property is answered by /decide and /flags', { timeout: 60_000 }, async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  assert.equal((await api.post('/feature_flags/', { key: 'redos', filters: { groups: [{ properties: [regexCondition()], rollout_percentage: 100 }] } })).statusCode, 201)
  assert.equal((await api.post('/feature_flags/', { key: 'redos-not', filters: { groups: [{ properties: [regexCondition('not_regex')], rollout_percentage: 100 }] } })).statusCode, 201)
  const body = { api_key: app.projectKey, distinct_id: 'attacker', person_properties: { name: HOSTILE } }
  const decide = await app.http.inject({ method: 'POST', url: '/decide/?v=3', payload: body })
  assert.equal(decide.statusCode, 200)
  assert.deepEqual(decide.json().featureFlags, { redos: false, 'redos-not': true })
  const flags = await app.http.inject({ method: 'POST', url: '/flags/?v=2', payload: body })
  assert.equal(flags.statusCode, 200)
  assert.equal(flags.json().flags.redos.enabled, false)
  const matching = await app.http.inject({ method: 'POST', url: '/decide/?v=3', payload: { ...body, person_properties: { name: 'a'.repeat(10_000) } } })
  assert.deepEqual(matching.json().featureFlags, { redos: true, 'redos-not': false })
  assert.equal((await app.http.inject({ method: 'GET', url: '/_health' })).statusCode, 200)
})

test('a catastrophic regex in a cohort condition is answered by /decide', { timeout: 60_000 }, async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  const cohort = await api.post('/cohorts/', { name: 'hostile', filters: { properties: { type: 'AND', values: [regexCondition()] } } })
  assert.equal(cohort.statusCode, 201, cohort.body)
  const flag = { key: 'in-cohort', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort.json().id }], rollout_percentage: 100 }] } }
  assert.equal((await api.post('/feature_flags/', flag)).statusCode, 201)
  const res = await app.http.inject({
    method: 'POST',
    url: '/decide/?v=3',
    payload: { api_key: app.projectKey, distinct_id: 'attacker', person_properties: { name: HOSTILE } },
  })
  assert.equal(res.statusCode, 200)
  assert.equal(res.json().featureFlags['in-cohort'], false)
})
