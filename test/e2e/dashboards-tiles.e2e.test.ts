import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileTestProjects } from '../helpers/test-app.ts'
import { privateApi, strangerWithProject } from '../helpers/private-api.ts'

type TileJson = { id: number; insight: { id: number; name: string } | null; text: { body: string } | null; order: number; layouts: Record<string, unknown> }

const names = (d: { tiles: TileJson[] }) => d.tiles.map((t) => t.insight?.name ?? t.text?.body)

// One app for the file, a project of its own per test: the counts and lists below are the test's own.
const project = fileTestProjects()

const TEMPLATE = {
  template_name: 'My template',
  dashboard_description: 'from json',
  dashboard_filters: { date_from: '-14d' },
  tags: ['tpl'],
  tiles: [
    { type: 'INSIGHT', name: 'Pageviews', description: 'pv', filters: { insight: 'TRENDS' }, layouts: { sm: { x: 0, y: 5, w: 6, h: 5 } }, color: 'blue' },
    { type: 'TEXT', body: '# Hello', layouts: { sm: { x: 0, y: 0, w: 12, h: 2 } } },
    { type: 'INSIGHT', name: 'By query', query: { kind: 'TrendsQuery' }, layouts: { sm: { x: 6, y: 5, w: 6, h: 5 } } },
  ],
}

test('tiles: insights placed with dashboards=[id] appear as tiles with their insight', async () => {
  const app = await project()
  const api = privateApi(app)
  const d = (await api.post('/dashboards/', { name: 'D' })).json()
  const ins = (await api.post('/insights/', { name: 'Signups', filters: { insight: 'TRENDS' }, dashboards: [d.id] })).json()
  const full = (await api.get(`/dashboards/${d.id}/`)).json()
  assert.equal(full.tiles.length, 1)
  const tile = full.tiles[0]
  assert.equal(tile.insight.id, ins.id)
  assert.equal(tile.insight.name, 'Signups')
  assert.deepEqual(tile.insight.filters, { insight: 'TRENDS' })
  assert.equal(tile.text, null)
  assert.equal(tile.deleted, false)
  assert.equal(tile.order, 0)
  for (const f of ['layouts', 'color', 'filters_overrides', 'last_refresh', 'is_cached']) assert.ok(f in tile, f)
})

test('tiles: PATCH tiles adds a text card, updates layouts and soft-deletes a tile', async () => {
  const app = await project()
  const api = privateApi(app)
  const d = (await api.post('/dashboards/', { name: 'D' })).json()
  await api.post('/insights/', { name: 'A', dashboards: [d.id] })
  const withText = (await api.patch(`/dashboards/${d.id}/`, { tiles: [{ text: { body: 'note' }, layouts: { sm: { x: 0, y: 0 } } }] })).json()
  assert.deepEqual(names(withText), ['note', 'A'], 'text at y=0 comes before the insight without layout')
  const insightTile = withText.tiles.find((x: TileJson) => x.insight)
  const moved = (await api.patch(`/dashboards/${d.id}/`, { tiles: [{ id: insightTile.id, layouts: { sm: { x: 0, y: -1 } }, color: 'red' }] })).json()
  assert.deepEqual(names(moved), ['A', 'note'])
  assert.equal(moved.tiles[0].color, 'red')
  const textTile = moved.tiles[1]
  const edited = (await api.patch(`/dashboards/${d.id}/`, { tiles: [{ id: textTile.id, text: { body: 'edited' } }] })).json()
  assert.deepEqual(names(edited), ['A', 'edited'])
  const removed = (await api.patch(`/dashboards/${d.id}/`, { tiles: [{ id: textTile.id, deleted: true }] })).json()
  assert.deepEqual(names(removed), ['A'])
  const bad = await api.patch(`/dashboards/${d.id}/`, { tiles: [{ id: 9999, color: 'x' }] })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().attr, 'tiles__0__id')
  const long = await api.patch(`/dashboards/${d.id}/`, { tiles: [{ text: { body: 'x'.repeat(4001) } }] })
  assert.equal(long.json().attr, 'tiles__0__text__body')
})

test('move_tile: moves the tile to another dashboard and returns the source dashboard', async () => {
  const app = await project()
  const api = privateApi(app)
  const from = (await api.post('/dashboards/', { name: 'from' })).json()
  const to = (await api.post('/dashboards/', { name: 'to' })).json()
  const ins = (await api.post('/insights/', { name: 'I', dashboards: [from.id] })).json()
  const tileId = ins.dashboard_tiles[0].id
  const res = await api.patch(`/dashboards/${from.id}/move_tile/`, { tile: { id: tileId }, toDashboard: to.id })
  assert.equal(res.statusCode, 200)
  assert.equal(res.json().id, from.id)
  assert.deepEqual(res.json().tiles, [])
  const target = (await api.get(`/dashboards/${to.id}/`)).json()
  assert.deepEqual(target.tiles.map((x: TileJson) => x.id), [tileId])
  assert.deepEqual((await api.get(`/insights/${ins.id}/`)).json().dashboards, [to.id])
})

test('move_tile: a missing or foreign tile or target is a 400 naming the field, and nothing moves', async () => {
  const app = await project()
  const api = privateApi(app)
  const from = (await api.post('/dashboards/', { name: 'from' })).json()
  const to = (await api.post('/dashboards/', { name: 'to' })).json()
  const ins = (await api.post('/insights/', { name: 'I', dashboards: [from.id] })).json()
  const tileId = ins.dashboard_tiles[0].id
  const other = await strangerWithProject(app)
  const foreign = (await privateApi(app, other.headers, other.projectId).post('/dashboards/', { name: 'f' })).json()
  const cases: [unknown, string][] = [
    [{ toDashboard: to.id }, 'tile'],
    [{ tile: {}, toDashboard: to.id }, 'tile__id'],
    [{ tile: { id: 'x' }, toDashboard: to.id }, 'tile__id'],
    [{ tile: { id: tileId } }, 'toDashboard'],
    [{ tile: { id: tileId }, toDashboard: 'x' }, 'toDashboard'],
    [{ tile: { id: 9999 }, toDashboard: to.id }, 'tile__id'],
    [{ tile: { id: tileId }, toDashboard: foreign.id }, 'toDashboard'],
    [{ tile: { id: tileId }, toDashboard: 9999 }, 'toDashboard'],
  ]
  for (const [body, attr] of cases) {
    const res = await api.patch(`/dashboards/${from.id}/move_tile/`, body)
    assert.equal(res.statusCode, 400, JSON.stringify(body))
    assert.equal(res.json().type, 'validation_error')
    assert.equal(res.json().attr, attr, JSON.stringify(body))
  }
  assert.equal((await api.patch(`/dashboards/${to.id}/move_tile/`, { tile: { id: tileId }, toDashboard: from.id })).json().attr, 'tile__id')
  assert.equal((await api.get(`/dashboards/${from.id}/`)).json().tiles.length, 1)
})

test('create_from_template_json: builds the dashboard and its insight and text tiles', async () => {
  const app = await project()
  const api = privateApi(app)
  const res = await api.post('/dashboards/create_from_template_json/', { template: TEMPLATE })
  assert.equal(res.statusCode, 200)
  const d = res.json()
  assert.equal(d.name, 'My template')
  assert.equal(d.description, 'from json')
  assert.deepEqual(d.filters, { date_from: '-14d' })
  assert.deepEqual(d.tags, ['tpl'])
  assert.deepEqual(names(d), ['# Hello', 'Pageviews', 'By query'])
  assert.deepEqual(d.tiles.map((x: TileJson) => x.order), [0, 1, 2])
  assert.deepEqual(d.tiles[1].insight.filters, { insight: 'TRENDS', filter_test_accounts: true })
  assert.deepEqual(d.tiles[2].insight.query, { kind: 'TrendsQuery' })
  assert.equal(d.tiles[1].color, 'blue')
  assert.equal((await api.get('/insights/')).json().count, 2)
})

test('create_from_template_json: an invalid template is a 400 naming the field and creates nothing', async () => {
  const app = await project()
  const api = privateApi(app)
  const without = (key: string) => Object.fromEntries(Object.entries(TEMPLATE).filter(([k]) => k !== key))
  const cases: [unknown, string][] = [
    [{}, 'template'],
    [{ template: 'x' }, 'template'],
    [{ template: without('template_name') }, 'template__template_name'],
    [{ template: { ...TEMPLATE, template_name: 5 } }, 'template__template_name'],
    [{ template: without('dashboard_description') }, 'template__dashboard_description'],
    [{ template: { ...TEMPLATE, dashboard_filters: [] } }, 'template__dashboard_filters'],
    [{ template: { ...TEMPLATE, tiles: [] } }, 'template__tiles'],
    [{ template: { ...TEMPLATE, tiles: ['x'] } }, 'template__tiles__0'],
    [{ template: { ...TEMPLATE, tags: [1] } }, 'template__tags__0'],
  ]
  for (const [body, attr] of cases) {
    const res = await api.post('/dashboards/create_from_template_json/', body)
    assert.equal(res.statusCode, 400, JSON.stringify(body))
    assert.equal(res.json().type, 'validation_error')
    assert.equal(res.json().attr, attr, JSON.stringify(body))
  }
  assert.equal((await api.get('/dashboards/')).json().count, 0)
  assert.equal((await api.get('/insights/')).json().count, 0)
})

test('use_template: DEFAULT_APP builds the product analytics dashboard; a given name is kept', async () => {
  const app = await project()
  const api = privateApi(app)
  const named = (await api.post('/dashboards/', { name: 'Mine', use_template: 'DEFAULT_APP' })).json()
  assert.equal(named.name, 'Mine')
  assert.equal(named.creation_mode, 'template')
  assert.equal(named.tiles.length, 6)
  assert.ok(named.tiles.every((x: TileJson) => x.insight && x.insight.name))
  assert.ok(names(named).includes('Daily active users (DAUs)'))
  const unnamed = (await api.post('/dashboards/', { use_template: 'WEBSITE_TRAFFIC' })).json()
  assert.equal(unnamed.name, 'Website traffic')
  assert.deepEqual(unnamed.filters, { date_from: '-30d' })
  assert.ok(unnamed.tiles.length > 0)
})

test('use_dashboard: duplicates the tiles sharing insights, or deep-copies with duplicate_tiles', async () => {
  const app = await project()
  const api = privateApi(app)
  const src = (await api.post('/dashboards/', { name: 'src' })).json()
  const ins = (await api.post('/insights/', { name: 'I', dashboards: [src.id] })).json()
  await api.patch(`/dashboards/${src.id}/`, { tiles: [{ text: { body: 'txt' }, layouts: { sm: { x: 0, y: 9 } } }] })
  const copy = (await api.post('/dashboards/', { name: 'copy', use_dashboard: src.id })).json()
  assert.equal(copy.creation_mode, 'duplicate')
  assert.deepEqual(names(copy), ['txt', 'I'])
  assert.equal(copy.tiles.find((x: TileJson) => x.insight).insight.id, ins.id)
  assert.deepEqual((await api.get(`/insights/${ins.id}/`)).json().dashboards.sort(), [src.id, copy.id].sort())
  const deep = (await api.post('/dashboards/', { name: 'deep', use_dashboard: src.id, duplicate_tiles: true })).json()
  const deepInsight = deep.tiles.find((x: TileJson) => x.insight).insight
  assert.notEqual(deepInsight.id, ins.id)
  assert.equal(deepInsight.name, 'I (Copy)')
  assert.equal((await api.get(`/dashboards/${src.id}/`)).json().tiles.length, 2, 'the source is unchanged')
})

test('soft delete hides tiles; delete_insights also deletes insights shown nowhere else; restore brings them back', async () => {
  const app = await project()
  const api = privateApi(app)
  const a = (await api.post('/dashboards/', { name: 'a' })).json()
  const b = (await api.post('/dashboards/', { name: 'b' })).json()
  const only = (await api.post('/insights/', { name: 'only-a', dashboards: [a.id] })).json()
  const shared = (await api.post('/insights/', { name: 'shared', dashboards: [a.id, b.id] })).json()
  await api.patch(`/dashboards/${a.id}/`, { deleted: true, delete_insights: true })
  assert.equal((await api.get(`/insights/${only.id}/`)).statusCode, 404)
  assert.deepEqual((await api.get(`/insights/${shared.id}/`)).json().dashboards, [b.id])
  await api.patch(`/dashboards/${a.id}/`, { deleted: false })
  assert.deepEqual(names((await api.get(`/dashboards/${a.id}/`)).json()).sort(), ['only-a', 'shared'])
  assert.equal((await api.get(`/insights/${only.id}/`)).statusCode, 200)
})
