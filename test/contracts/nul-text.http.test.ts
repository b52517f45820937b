import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'

// PostgreSQL (and so PGlite) cannot store U+0000: every metadata write carrying one answers a 400
// naming the field, as the store contracts promise, where it used to be a 500.
test('a NUL character in a private API write is a 400 naming the field, never a 500', async (t) => {
  const app = await buildTestApp(t)
  const p = `/api/projects/${app.projectId}`
  const cases: Array<[string, string, unknown, string]> = [
    ['POST', `${p}/feature_flags/`, { key: 'k1', name: 'a\u0000b' }, 'name'],
    ['POST', `${p}/feature_flags/`, { key: 'k2', filters: { groups: [{ properties: [{ key: 'a', value: 'x\u0000', type: 'person' }], rollout_percentage: 100 }] } }, 'filters'],
    ['POST', `${p}/dashboards/`, { name: 'd\u0000' }, 'name'],
    ['POST', `${p}/dashboards/`, { name: 'd', filters: { x: '\u0000' } }, 'filters'],
    ['POST', `${p}/insights/`, { name: 'i', query: { kind: 'x\u0000' } }, 'query.kind'],
    ['POST', `${p}/actions/`, { name: 'a\u0000' }, 'name'],
    ['POST', `${p}/cohorts/`, { name: 'c\u0000', groups: [] }, 'name'],
  ]
  for (const [method, url, body, attr] of cases) {
    const res = await app.http.inject({ method: method as 'POST', url, headers: { ...app.auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
    assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(body)}: ${res.body}`)
    assert.equal(res.json().type, 'validation_error')
    assert.equal(res.json().attr, attr, `${url} ${JSON.stringify(body)}`)
  }
  // Nothing was half-written: the lists are empty.
  for (const what of ['feature_flags', 'dashboards', 'insights', 'actions', 'cohorts']) {
    const res = await app.http.inject({ url: `${p}/${what}/`, headers: app.auth })
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().results.length, 0, what)
  }
})
