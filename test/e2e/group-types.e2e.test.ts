import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'

test('group types: created by name up to five per project, renamed through update_metadata, fields checked', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  const company = await api.post('/groups_types/', { group_type: 'company' })
  assert.equal(company.statusCode, 201)
  assert.deepEqual(company.json(), { group_type: 'company', group_type_index: 0, name_singular: null, name_plural: null })
  assert.equal((await api.post('/groups_types/', { group_type: 'company' })).json().group_type_index, 0, 'the same name is the same type')
  for (const name of ['team', 'org', 'store', 'region']) assert.equal((await api.post('/groups_types/', { group_type: name })).statusCode, 201)
  const sixth = await api.post('/groups_types/', { group_type: 'sixth' })
  assert.equal(sixth.statusCode, 400)
  assert.equal(sixth.json().attr, 'group_type')

  assert.equal((await api.post('/groups_types/', { group_type: '  ' })).json().code, 'blank')
  assert.equal((await api.post('/groups_types/', {})).json().code, 'required')
  assert.equal((await api.post('/groups_types/', { group_type: {} })).json().code, 'invalid_input')

  const renamed = await api.patch('/groups_types/update_metadata/', [{ group_type_index: 1, name_singular: 'Team', name_plural: 'Teams' }])
  assert.equal(renamed.statusCode, 200)
  assert.deepEqual(renamed.json()[1], { group_type: 'team', group_type_index: 1, name_singular: 'Team', name_plural: 'Teams' })
  assert.equal((await api.patch('/groups_types/update_metadata/', { group_type_index: 0, name_plural: 'Companies' })).json()[0].name_plural, 'Companies')
  const missing = await api.patch('/groups_types/update_metadata/', [{ name_singular: 'x' }])
  assert.deepEqual([missing.statusCode, missing.json().attr, missing.json().code], [400, '0__group_type_index', 'required'])
  assert.equal((await api.patch('/groups_types/update_metadata/', { group_type_index: 'one' })).json().code, 'invalid_input')
  assert.equal((await api.patch('/groups_types/update_metadata/', { group_type_index: 4000 })).statusCode, 404)
})
