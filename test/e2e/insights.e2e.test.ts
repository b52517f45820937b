import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileTestProjects } from '../helpers/test-app.ts'
import { privateApi, strangerWithProject } from '../helpers/private-api.ts'

// One app for the file, a project of its own per test: the counts and lists below are the test's own.
const project = fileTestProjects()

test('insights: create, retrieve and list with short_id, query/filters JSON and created_by', async () => {
  const app = await project()
  const api = privateApi(app)
  const res = await api.post('/insights/', { name: 'Trend', description: 'd', query: { kind: 'TrendsQuery' }, filters: { insight: 'TRENDS' } })
  assert.equal(res.statusCode, 201)
  const ins = res.json()
  assert.match(ins.short_id, /^[A-Za-z0-9]{8}$/)
  assert.deepEqual(ins.query, { kind: 'TrendsQuery' })
  assert.deepEqual(ins.filters, { insight: 'TRENDS' })
  assert.deepEqual(ins.dashboards, [])
  assert.equal(ins.created_by.email, 'owner@tally.local')
  assert.equal((await api.get(`/insights/${ins.id}/`)).json().name, 'Trend')
  const list = (await api.get('/insights/')).json()
  assert.equal(list.count, 1)
  assert.equal(list.results[0].id, ins.id)
})

test('insights: PATCH dashboards moves placements; deleted dashboards are ignored, unknown ones refused', async () => {
  const app = await project()
  const api = privateApi(app)
  const a = (await api.post('/dashboards/', { name: 'a' })).json()
  const b = (await api.post('/dashboards/', { name: 'b' })).json()
  const gone = (await api.post('/dashboards/', { name: 'gone' })).json()
  await api.patch(`/dashboards/${gone.id}/`, { deleted: true })
  const ins = (await api.post('/insights/', { name: 'I', dashboards: [a.id, gone.id] })).json()
  assert.deepEqual(ins.dashboards, [a.id])
  const moved = (await api.patch(`/insights/${ins.id}/`, { dashboards: [b.id] })).json()
  assert.deepEqual(moved.dashboards, [b.id])
  assert.deepEqual((await api.get(`/dashboards/${a.id}/`)).json().tiles, [])
  const back = (await api.patch(`/insights/${ins.id}/`, { dashboards: [a.id, b.id] })).json()
  assert.deepEqual(back.dashboards.sort(), [a.id, b.id].sort())
  const bad = await api.patch(`/insights/${ins.id}/`, { name: 'renamed', dashboards: [a.id, 9999] })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().attr, 'dashboards')
  assert.equal(bad.json().code, 'does_not_exist')
  assert.equal((await api.get(`/insights/${ins.id}/`)).json().name, 'I', 'nothing half-written')
})

test('insights: validation errors name the field and create nothing', async () => {
  const app = await project()
  const api = privateApi(app)
  const cases: [unknown, string, string][] = [
    [{ name: {} }, 'name', 'invalid_input'],
    [{ description: null }, 'description', 'null'],
    [{ query: 'x' }, 'query', 'not_a_dict'],
    [{ filters: [] }, 'filters', 'not_a_dict'],
    [{ deleted: 'x' }, 'deleted', 'invalid_input'],
    [{ dashboards: 1 }, 'dashboards', 'not_a_list'],
    [{ dashboards: ['x'] }, 'dashboards', 'incorrect_type'],
    [{ dashboards: [9999] }, 'dashboards', 'does_not_exist'],
  ]
  for (const [body, attr, code] of cases) {
    const res = await api.post('/insights/', body)
    assert.equal(res.statusCode, 400, JSON.stringify(body))
    assert.equal(res.json().type, 'validation_error')
    assert.equal(res.json().attr, attr, JSON.stringify(body))
    assert.equal(res.json().code, code, JSON.stringify(body))
  }
  assert.equal((await api.raw('POST', '/insights/', '{')).statusCode, 400)
  assert.equal((await api.get('/insights/')).json().count, 0)
})

test('insights: soft delete hides the insight and its tiles; DELETE is 405 with no body', async () => {
  const app = await project()
  const api = privateApi(app)
  const d = (await api.post('/dashboards/', { name: 'd' })).json()
  const ins = (await api.post('/insights/', { name: 'I', dashboards: [d.id] })).json()
  const del = await api.delete(`/insights/${ins.id}/`)
  assert.equal(del.statusCode, 405)
  assert.equal(del.body, '')
  assert.equal((await api.get(`/insights/${ins.id}/`)).statusCode, 200)
  assert.equal((await api.patch(`/insights/${ins.id}/`, { deleted: true })).json().deleted, true)
  assert.equal((await api.get(`/insights/${ins.id}/`)).statusCode, 404)
  assert.equal((await api.get('/insights/')).json().count, 0)
  assert.deepEqual((await api.get(`/dashboards/${d.id}/`)).json().tiles, [])
  assert.equal((await api.patch(`/insights/${ins.id}/`, { deleted: false })).json().deleted, false)
  assert.equal((await api.get(`/dashboards/${d.id}/`)).json().tiles.length, 1)
})

test('insights: pagination links and project isolation', async () => {
  const app = await project()
  const api = privateApi(app)
  for (let i = 0; i < 3; i++) await api.post('/insights/', { name: `i${i}` })
  const page = (await api.get('/insights/?limit=2')).json()
  assert.equal(page.count, 3)
  assert.equal(page.next, `http://localhost${api.base}/insights/?limit=2&offset=2`)
  const other = await strangerWithProject(app)
  const stranger = privateApi(app, other.headers, other.projectId)
  assert.equal((await stranger.get('/insights/')).json().count, 0)
  const mine = page.results[0].id
  assert.equal((await stranger.get(`/insights/${mine}/`)).statusCode, 404)
  const d = (await api.post('/dashboards/', { name: 'mine' })).json()
  const res = await stranger.post('/insights/', { name: 'x', dashboards: [d.id] })
  assert.equal(res.statusCode, 400)
  assert.equal(res.json().attr, 'dashboards')
})
