import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'

const rollout = { groups: [{ properties: [], rollout_percentage: 100 }] }
const variants = { ...rollout, multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } }

test('flag list: filters, order and pagination run in the store; the envelope counts what passed', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  for (const body of [
    { key: 'alpha-checkout', name: 'Checkout', filters: rollout },
    { key: 'beta_pricing', name: 'Pricing 100%', filters: variants },
    { key: 'gamma', name: 'Off', filters: rollout, active: false },
  ]) {
    assert.equal((await api.post('/feature_flags/', body)).statusCode, 201)
  }
  const keys = async (query: string) => {
    const res = await api.get(`/feature_flags/?${query}`)
    assert.equal(res.statusCode, 200, res.body)
    return { count: res.json().count as number, keys: (res.json().results as { key: string }[]).map((f) => f.key), next: res.json().next }
  }
  assert.deepEqual((await keys('')).keys, ['gamma', 'beta_pricing', 'alpha-checkout'])
  assert.deepEqual((await keys('order=key')).keys, ['alpha-checkout', 'beta_pricing', 'gamma'])
  assert.deepEqual((await keys('order=-key')).keys, ['gamma', 'beta_pricing', 'alpha-checkout'])
  assert.deepEqual((await keys('active=false')).keys, ['gamma'])
  assert.deepEqual((await keys('active=true&order=key')).keys, ['alpha-checkout', 'beta_pricing'])
  assert.deepEqual((await keys('search=CHECK')).keys, ['alpha-checkout'])
  assert.deepEqual((await keys('search=100%25')).keys, ['beta_pricing'], 'a % in search is a literal')
  assert.deepEqual((await keys('search=a_c')).keys, [], 'an _ in search is a literal')
  assert.deepEqual((await keys('type=multivariant')).keys, ['beta_pricing'])
  assert.deepEqual((await keys('type=boolean&order=key')).keys, ['alpha-checkout', 'gamma'])
  const page = await keys('limit=1&offset=1&order=key')
  assert.deepEqual(page.keys, ['beta_pricing'])
  assert.equal(page.count, 3)
  assert.match(page.next, /limit=1&offset=2&order=key$/)
})

test('flag writes: DRF field errors, PUT as PATCH, DELETE refused with 405 and no body', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  const bad = await api.post('/feature_flags/', { key: 'k', filters: rollout, active: 'perhaps' })
  assert.deepEqual(bad.json(), { type: 'validation_error', code: 'invalid_input', detail: 'Must be a valid boolean.', attr: 'active' })
  const created = await api.post('/feature_flags/', { key: 'k', filters: rollout })
  assert.equal(created.statusCode, 201)
  const put = await app.http.inject({ method: 'PUT', url: `${api.base}/feature_flags/${created.json().id}/`, headers: app.auth, payload: { name: 'Renamed' } })
  assert.equal(put.statusCode, 200)
  assert.equal(put.json().name, 'Renamed')
  const del = await api.delete(`/feature_flags/${created.json().id}/`)
  assert.equal(del.statusCode, 405)
  assert.equal(del.body, '')
  assert.equal((await api.get(`/feature_flags/${created.json().id}`)).statusCode, 200)
})
