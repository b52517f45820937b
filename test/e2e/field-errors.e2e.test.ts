import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'

// Every writable resource with the smallest body it accepts; each malformed field below is sent to
// every resource that has the field, and every one must answer the same status, code and attr.
const RESOURCES: Record<string, { path: string; valid: object; fields: string[] }> = {
  dashboards: { path: '/dashboards/', valid: { name: 'd' }, fields: ['name', 'description', 'deleted', 'tags'] },
  insights: { path: '/insights/', valid: { name: 'i' }, fields: ['name', 'description', 'deleted'] },
  actions: { path: '/actions/', valid: { name: 'a' }, fields: ['name', 'description', 'deleted', 'tags'] },
  feature_flags: { path: '/feature_flags/', valid: { key: 'f' }, fields: ['name', 'deleted', 'tags', 'active'] },
  cohorts: { path: '/cohorts/', valid: { name: 'c' }, fields: ['name', 'description', 'deleted', 'is_static'] },
}

const MALFORMED: Record<string, Array<[unknown, string, string]>> = {
  name: [[{ a: 1 }, 'name', 'invalid_input'], [['x'], 'name', 'invalid_input']],
  description: [[{ a: 1 }, 'description', 'invalid_input']],
  deleted: [['perhaps', 'deleted', 'invalid_input'], [null, 'deleted', 'null']],
  active: [['perhaps', 'active', 'invalid_input']],
  is_static: [['perhaps', 'is_static', 'invalid_input']],
  tags: [['x', 'tags', 'not_a_list'], [[{}], 'tags__0', 'invalid_input']],
}

test('the same malformed field gives the same error in every writable resource', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  let checked = 0
  for (const [resource, { path, valid, fields }] of Object.entries(RESOURCES)) {
    for (const field of fields) {
      for (const [value, attr, code] of MALFORMED[field]!) {
        const res = await api.post(path, { ...valid, [field]: value })
        const label = `${resource}.${field} = ${JSON.stringify(value)}`
        assert.equal(res.statusCode, 400, `${label}: ${res.body}`)
        assert.deepEqual({ type: res.json().type, code: res.json().code, attr: res.json().attr }, { type: 'validation_error', code, attr }, label)
        checked++
      }
    }
    const notAnObject = await api.raw('POST', path, '"just a string"')
    assert.deepEqual([notAnObject.statusCode, notAnObject.json().code, notAnObject.json().attr], [400, 'invalid_input', null], `${resource}: a string body`)
  }
  assert.ok(checked >= 20)
})
