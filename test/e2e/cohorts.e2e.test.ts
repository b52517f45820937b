import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'

const dynamic = (name: string) => ({
  name,
  filters: { properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] } },
})

test('cohorts: paginated list in the store, newest first; DELETE refused; soft delete hides', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  for (const name of ['one', 'two', 'three']) assert.equal((await api.post('/cohorts/', dynamic(name))).statusCode, 201)
  const page = await api.get('/cohorts/?limit=2')
  assert.equal(page.json().count, 3)
  assert.deepEqual(page.json().results.map((c: { name: string }) => c.name), ['three', 'two'])
  assert.match(page.json().next, /limit=2&offset=2$/)
  const id = page.json().results[0].id
  const del = await api.delete(`/cohorts/${id}/`)
  assert.equal(del.statusCode, 405)
  assert.equal((await api.patch(`/cohorts/${id}/`, { deleted: true })).statusCode, 200)
  assert.equal((await api.get('/cohorts/')).json().count, 2)
})

test('cohorts: static members from CSV and distinct ids; add_persons_to_static_cohort needs person_ids', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  const res = await api.post('/cohorts/', { name: 'uploaded', is_static: true, csv: 'distinct_id\nu1\n"u2",x\n', distinct_ids: ['u3'] })
  assert.equal(res.statusCode, 201, res.body)
  assert.equal(res.json().count, 3)
  const missing = await api.patch(`/cohorts/${res.json().id}/add_persons_to_static_cohort/`, {})
  assert.deepEqual(missing.json(), { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'person_ids' })
})

test('cohorts: DRF field errors name the field with the codes every module uses', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  const cases: Array<[object, string, string]> = [
    [{ name: ['x'] }, 'name', 'invalid_input'],
    [{ name: 'x', is_static: 'perhaps' }, 'is_static', 'invalid_input'],
    [{ name: 'x', groups: 'all' }, 'groups', 'not_a_list'],
    [{ name: 'x', filters: 'all' }, 'filters', 'not_a_dict'],
    [{ name: 'x', distinct_ids: [{}] }, 'distinct_ids__0', 'invalid_input'],
    [{ name: 'x', filters: { properties: { type: 'XOR', values: [] } } }, 'filters', 'invalid_input'],
  ]
  for (const [body, attr, code] of cases) {
    const res = await api.post('/cohorts/', body)
    assert.equal(res.statusCode, 400, JSON.stringify(body))
    assert.equal(res.json().attr, attr, JSON.stringify(body))
    assert.equal(res.json().code, code, JSON.stringify(body))
  }
})
