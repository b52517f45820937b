import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'

test('a legacy cohort reads the same in /decide and in local-evaluation definitions: an action-based group matches nobody', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  const cohort = await api.post('/cohorts/', {
    name: 'legacy',
    groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }] }, { action_id: 3, days: 7 }],
  })
  assert.equal(cohort.statusCode, 201, cohort.body)
  const id = cohort.json().id
  const flag = await api.post('/feature_flags/', { key: 'pro', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: id }], rollout_percentage: 100 }] } })
  assert.equal(flag.statusCode, 201, flag.body)

  const defs = await app.http.inject({ url: `/flags/definitions?token=${app.projectKey}&send_cohorts`, headers: app.auth })
  assert.equal(defs.statusCode, 200)
  assert.deepEqual(defs.json().cohorts[String(id)], {
    type: 'OR',
    values: [
      { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person' }] },
      { type: 'AND', values: [{ key: '', type: 'behavioral' }] },
    ],
  })
  const decide = (plan: string) =>
    app.http.inject({ method: 'POST', url: '/decide/?v=3', payload: { api_key: app.projectKey, distinct_id: 'u', person_properties: { plan } } })
  assert.equal((await decide('free')).json().featureFlags.pro, false)
  assert.equal((await decide('pro')).json().featureFlags.pro, true)
})
