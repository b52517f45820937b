import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, fileTestProjects } from '../helpers/test-app.ts'
import { privateApi, strangerWithProject } from '../helpers/private-api.ts'

const LIST_FIELDS = [
  'id', 'name', 'description', 'pinned', 'created_at', 'created_by', 'is_shared', 'deleted', 'creation_mode', 'tags',
  'restriction_level', 'effective_restriction_level', 'effective_privilege_level',
]
const FULL_ONLY = ['use_template', 'use_dashboard', 'delete_insights', 'filters', 'tiles']
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
// One app for the file, a project of its own per test: the counts and lists below are the test's own.
const project = fileTestProjects()

test('dashboards: create returns 201 with the full record, defaults and created_by of the key user', async () => {
  const app = await project()
  const api = privateApi(app)
  const res = await api.post('/dashboards/', { name: 'Sales', description: 'numbers', pinned: true, tags: ['Kpi', 'kpi'], filters: { date_from: '-7d' } })
  assert.equal(res.statusCode, 201)
  const d = res.json()
  for (const f of [...LIST_FIELDS, ...FULL_ONLY]) assert.ok(f in d, f)
  assert.equal(d.name, 'Sales')
  assert.equal(d.description, 'numbers')
  assert.equal(d.pinned, true)
  assert.deepEqual(d.tags, ['kpi'])
  assert.deepEqual(d.filters, { date_from: '-7d' })
  assert.equal(d.deleted, false)
  assert.equal(d.is_shared, false)
  assert.equal(d.creation_mode, 'default')
  assert.equal(d.restriction_level, 21)
  assert.equal(d.effective_restriction_level, 21)
  assert.equal(d.effective_privilege_level, 37)
  assert.equal(d.delete_insights, false)
  assert.deepEqual(d.tiles, [])
  assert.match(d.created_at, ISO)
  assert.deepEqual(Object.keys(d.created_by).sort(), ['distinct_id', 'email', 'first_name', 'id', 'is_email_verified', 'last_name', 'uuid'])
  assert.equal(d.created_by.email, 'owner@tally.local')
})

test('dashboards: list items carry the list fields only; retrieve gives the full record', async () => {
  const app = await project()
  const api = privateApi(app)
  const { id } = (await api.post('/dashboards/', { name: 'One' })).json()
  const list = (await api.get('/dashboards/')).json()
  assert.equal(list.count, 1)
  const item = list.results[0]
  for (const f of LIST_FIELDS) assert.ok(f in item, f)
  for (const f of FULL_ONLY) assert.ok(!(f in item), f)
  const one = await api.get(`/dashboards/${id}/`)
  assert.equal(one.statusCode, 200)
  for (const f of [...LIST_FIELDS, ...FULL_ONLY]) assert.ok(f in one.json(), f)
  assert.match(one.json().last_accessed_at, ISO)
})

test('dashboards: the path works with and without the trailing slash', async () => {
  const app = await project()
  const api = privateApi(app)
  const { id } = (await api.post('/dashboards', { name: 'x' })).json()
  assert.equal((await api.get(`/dashboards/${id}`)).statusCode, 200)
  assert.equal((await api.get('/dashboards')).json().count, 1)
})

test('dashboards: list is ordered pinned first, then by name', async () => {
  const app = await project()
  const api = privateApi(app)
  for (const [name, pinned] of [['b', false], ['a', false], ['z', true]] as const) await api.post('/dashboards/', { name, pinned })
  assert.deepEqual((await api.get('/dashboards/')).json().results.map((d: { name: string }) => d.name), ['z', 'a', 'b'])
})

test('dashboards: pagination gives count and absolute next/previous links, default limit 100', async () => {
  const app = await project()
  const api = privateApi(app)
  for (let i = 0; i < 5; i++) await api.post('/dashboards/', { name: `d${i}` })
  const first = (await api.get('/dashboards/?limit=2')).json()
  assert.equal(first.count, 5)
  assert.equal(first.results.length, 2)
  assert.equal(first.previous, null)
  assert.equal(first.next, `http://localhost${api.base}/dashboards/?limit=2&offset=2`)
  const second = (await app.http.inject({ url: new URL(first.next).pathname + new URL(first.next).search, headers: app.auth })).json()
  assert.deepEqual(second.results.map((d: { name: string }) => d.name), ['d2', 'd3'])
  assert.equal(second.previous, `http://localhost${api.base}/dashboards/?limit=2`)
  assert.equal(second.next, `http://localhost${api.base}/dashboards/?limit=2&offset=4`)
  const last = (await api.get('/dashboards/?limit=2&offset=4')).json()
  assert.equal(last.next, null)
  assert.equal(last.previous, `http://localhost${api.base}/dashboards/?limit=2&offset=2`)
  const all = (await api.get('/dashboards/?limit=abc')).json()
  assert.equal(all.results.length, 5)
  assert.equal(all.next, null)
})

test('dashboards: PATCH updates the given fields only', async () => {
  const app = await project()
  const api = privateApi(app)
  const { id } = (await api.post('/dashboards/', { name: 'old', description: 'keep' })).json()
  const res = await api.patch(`/dashboards/${id}/`, { name: 'new', pinned: true, restriction_level: 37 })
  assert.equal(res.statusCode, 200)
  assert.equal(res.json().name, 'new')
  assert.equal(res.json().description, 'keep')
  assert.equal(res.json().pinned, true)
  assert.equal(res.json().restriction_level, 37)
  assert.equal(res.json().effective_restriction_level, 37)
  assert.equal((await api.get(`/dashboards/${id}/`)).json().name, 'new')
})

test('dashboards: PATCH deleted=true soft-deletes; the record stays, leaves the list and 404s on retrieve', async () => {
  const app = await project()
  const api = privateApi(app)
  const { id } = (await api.post('/dashboards/', { name: 'gone' })).json()
  const res = await api.patch(`/dashboards/${id}/`, { deleted: true })
  assert.equal(res.statusCode, 200)
  assert.equal(res.json().deleted, true)
  assert.equal((await api.get('/dashboards/')).json().count, 0)
  assert.equal((await api.get(`/dashboards/${id}/`)).statusCode, 404)
  // Only a body of exactly `deleted: false` reaches a deleted dashboard: the record is still there.
  assert.equal((await api.patch(`/dashboards/${id}/`, { name: 'x' })).statusCode, 404)
  const restored = await api.patch(`/dashboards/${id}/`, { deleted: false })
  assert.equal(restored.statusCode, 200)
  assert.equal(restored.json().deleted, false)
  assert.equal((await api.get('/dashboards/')).json().count, 1)
})

test('dashboards: DELETE answers 405 with no body and changes nothing', async () => {
  const app = await project()
  const api = privateApi(app)
  const { id } = (await api.post('/dashboards/', { name: 'stay' })).json()
  for (const path of [`/dashboards/${id}/`, `/dashboards/${id}`, '/dashboards/999/']) {
    const res = await api.delete(path)
    assert.equal(res.statusCode, 405, path)
    assert.equal(res.body, '')
  }
  const one = await api.get(`/dashboards/${id}/`)
  assert.equal(one.statusCode, 200)
  assert.equal(one.json().deleted, false)
})

test('dashboards: every validation error is a 400 validation_error naming the field', async () => {
  const app = await project()
  const api = privateApi(app)
  const cases: [unknown, string | null, string][] = [
    [{ restriction_level: 5 }, 'restriction_level', 'invalid_choice'],
    [{ restriction_level: 'abc' }, 'restriction_level', 'invalid_choice'],
    [{ restriction_level: null }, 'restriction_level', 'null'],
    [{ name: ['x'] }, 'name', 'invalid_input'],
    [{ name: 'x'.repeat(401) }, 'name', 'max_length'],
    [{ description: {} }, 'description', 'invalid_input'],
    [{ pinned: 'maybe' }, 'pinned', 'invalid_input'],
    [{ deleted: 3 }, 'deleted', 'invalid_input'],
    [{ filters: [1] }, 'filters', 'not_a_dict'],
    [{ tags: 'a' }, 'tags', 'not_a_list'],
    [{ tags: [{}] }, 'tags__0', 'invalid_input'],
    [{ use_dashboard: 'x' }, 'use_dashboard', 'invalid_input'],
    [{ use_dashboard: 999 }, 'use_dashboard', 'invalid_input'],
    [{ use_template: 'NOPE' }, 'use_template', 'invalid_input'],
    [{ use_template: 'DEFAULT_APP', use_dashboard: 1 }, null, 'invalid_input'],
    [{ delete_insights: 'x' }, 'delete_insights', 'invalid_input'],
    [[1, 2], null, 'invalid_input'],
  ]
  for (const [body, attr, code] of cases) {
    const res = await api.post('/dashboards/', body)
    assert.equal(res.statusCode, 400, JSON.stringify(body))
    assert.equal(res.json().type, 'validation_error')
    assert.equal(res.json().attr, attr, JSON.stringify(body))
    assert.equal(res.json().code, code, JSON.stringify(body))
  }
  assert.equal((await api.post('/dashboards/', { filters: 'x' })).json().detail, 'Filters must be a dictionary')
  assert.equal((await api.post('/dashboards/', { use_template: 'NOPE' })).json().detail, 'Invalid template provided: NOPE')
  assert.equal((await api.post('/dashboards/', { restriction_level: 5 })).json().detail, '"5" is not a valid choice.')
  assert.equal((await api.get('/dashboards/')).json().count, 0, 'nothing half-written')
})

test('dashboards: restriction_level accepts 21 and 37 (also as strings)', async () => {
  const app = await project()
  const api = privateApi(app)
  assert.equal((await api.post('/dashboards/', { restriction_level: 37 })).json().restriction_level, 37)
  assert.equal((await api.post('/dashboards/', { restriction_level: '21' })).json().restriction_level, 21)
})

test('dashboards: a PATCH validation error changes nothing', async () => {
  const app = await project()
  const api = privateApi(app)
  const { id } = (await api.post('/dashboards/', { name: 'same' })).json()
  const res = await api.patch(`/dashboards/${id}/`, { name: 'changed', restriction_level: 99 })
  assert.equal(res.statusCode, 400)
  assert.equal(res.json().attr, 'restriction_level')
  assert.equal((await api.get(`/dashboards/${id}/`)).json().name, 'same')
})

test('dashboards: malformed JSON answers 400 validation_error', async () => {
  const app = await project()
  const api = privateApi(app)
  const { id } = (await api.post('/dashboards/', { name: 'x' })).json()
  for (const res of [await api.raw('POST', '/dashboards/', '{"name": '), await api.raw('PATCH', `/dashboards/${id}/`, 'nope')]) {
    assert.equal(res.statusCode, 400)
    assert.equal(res.json().type, 'validation_error')
    assert.equal(res.json().code, 'parse_error')
  }
  assert.equal((await api.get('/dashboards/')).json().count, 1)
})

test('dashboards: unknown ids, non-numeric ids and unsupported formats are 404', async () => {
  const app = await project()
  const api = privateApi(app)
  const { id } = (await api.post('/dashboards/', { name: 'x' })).json()
  for (const path of ['/dashboards/999/', '/dashboards/abc/', '/dashboards/99999999999/', `/dashboards/${id}/?format=csv`, '/dashboards/?format=csv']) {
    const res = await api.get(path)
    assert.equal(res.statusCode, 404, path)
    assert.deepEqual(res.json(), { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
  }
  assert.equal((await api.patch('/dashboards/999/', { name: 'x' })).statusCode, 404)
  assert.equal((await api.get(`/dashboards/${id}/?format=json`)).statusCode, 200)
})

test('dashboards: projects are isolated between projects and users', async () => {
  const app = await project()
  const owner = privateApi(app)
  const { id } = (await owner.post('/dashboards/', { name: 'mine' })).json()
  const other = await strangerWithProject(app)
  const stranger = privateApi(app, other.headers, other.projectId)
  assert.equal((await stranger.get('/dashboards/')).json().count, 0)
  const theirs = await stranger.post('/dashboards/', { name: 'theirs' })
  assert.equal(theirs.json().created_by.first_name, 'Stranger')
  // The stranger cannot reach the owner's project, nor the owner's dashboard through their own.
  const intoOwner = privateApi(app, other.headers, app.projectId)
  assert.equal((await intoOwner.get('/dashboards/')).statusCode, 404)
  assert.equal((await intoOwner.patch(`/dashboards/${id}/`, { name: 'hacked' })).statusCode, 404)
  assert.equal((await stranger.get(`/dashboards/${id}/`)).statusCode, 404)
  assert.equal((await stranger.patch(`/dashboards/${id}/`, { deleted: true })).statusCode, 404)
  assert.equal((await owner.get(`/dashboards/${id}/`)).json().name, 'mine')
  assert.deepEqual((await owner.get('/dashboards/')).json().results.map((d: { name: string }) => d.name), ['mine'])
})

test('dashboards: only the creator or an admin may restrict; restricted dashboards are read-only to members', async () => {
  const app = await project()
  const owner = privateApi(app)
  const member = await app.services.projects.createUser({ email: 'm@x.io', firstName: 'Member', projectIds: [app.projectId] })
  const asMember = privateApi(app, { authorization: `Bearer ${member.key}` })
  const open = (await owner.post('/dashboards/', { name: 'open' })).json()
  const res = await asMember.patch(`/dashboards/${open.id}/`, { restriction_level: 37 })
  assert.equal(res.statusCode, 403)
  assert.equal(res.json().code, 'permission_denied')
  assert.equal((await asMember.patch(`/dashboards/${open.id}/`, { name: 'renamed' })).statusCode, 200)
  const locked = (await owner.post('/dashboards/', { name: 'locked', restriction_level: 37 })).json()
  const seen = (await asMember.get(`/dashboards/${locked.id}/`)).json()
  assert.equal(seen.effective_privilege_level, 21)
  const denied = await asMember.patch(`/dashboards/${locked.id}/`, { name: 'no' })
  assert.equal(denied.statusCode, 403)
  assert.equal(denied.json().detail, "You don't have edit permissions for this dashboard.")
  assert.equal((await owner.get(`/dashboards/${locked.id}/`)).json().effective_privilege_level, 37)
})

test('dashboards: records and keys survive a restart', async (t) => {
  const first = await buildTestApp(t)
  const { id } = (await privateApi(first).post('/dashboards/', { name: 'kept', tags: ['a'] })).json()
  const { dataDir, personalKey, projectId } = first
  await first.close()
  const again = await buildTestApp(t, { dataDir })
  const api = privateApi(again, { authorization: `Bearer ${personalKey}` }, projectId)
  const res = await api.get(`/dashboards/${id}/`)
  assert.equal(res.statusCode, 200)
  assert.equal(res.json().name, 'kept')
  assert.deepEqual(res.json().tags, ['a'])
})
