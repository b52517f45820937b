import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { privateApi, strangerWithProject } from '../helpers/private-api.ts'

const capture = async (app: TestApp, batch: object[]) => {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
}
let clock = Date.parse('2024-06-01T00:00:00Z')
const identify = (type: string, key: string, set: Record<string, unknown>) => ({
  event: '$groupidentify', distinct_id: 'admin', uuid: crypto.randomUUID(), timestamp: new Date((clock += 1000)).toISOString(),
  properties: { $group_type: type, $group_key: key, $group_set: set },
})

interface GroupsPage {
  next: string | null
  previous: string | null
  results: Array<{ group_type_index: number; group_key: string; group_properties: Record<string, unknown>; created_at: string }>
}

/** Seven companies (type 0) in separate batches, so each has its own created_at, and one project (type 1). */
async function seed(app: TestApp) {
  for (let i = 1; i <= 7; i++) {
    await capture(app, [identify('company', `c${i}`, { name: i === 3 ? 'Acme Corp' : `Company ${i}`, size: i })])
    await waitForEvents(app, i)
  }
  await capture(app, [identify('project', 'p1', { name: 'Acme project' })])
  await waitForEvents(app, 8)
}

test('groups: listed by type index newest first, cursor pages cover each once; search and group_key filter; PostHog shape', async (t) => {
  const app = await buildTestApp(t)
  await seed(app)
  const api = privateApi(app)
  const keys: string[] = []
  let url: string | null = `${api.base}/groups/?group_type_index=0&limit=3`
  for (let pages = 0; url; pages++) {
    const current: string = url
    const res = await app.http.inject({ method: 'GET', url: current, headers: app.auth })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json() as GroupsPage
    assert.ok(body.results.length <= 3)
    assert.equal(body.previous, null)
    keys.push(...body.results.map((g) => g.group_key))
    url = body.next ? new URL(body.next).pathname + new URL(body.next).search : null
    assert.ok(pages < 4)
  }
  assert.deepEqual(keys, ['c7', 'c6', 'c5', 'c4', 'c3', 'c2', 'c1'])

  const first = (await api.get('/groups/?group_type_index=0&limit=1')).json() as GroupsPage
  const g = first.results[0]!
  assert.deepEqual(Object.keys(g).sort(), ['created_at', 'group_key', 'group_properties', 'group_type_index'])
  assert.equal(g.group_type_index, 0)
  assert.deepEqual(g.group_properties, { name: 'Company 7', size: 7 })
  assert.ok(!Number.isNaN(Date.parse(g.created_at)))

  const search = async (q: string) => ((await api.get(`/groups/?group_type_index=0&${q}`)).json() as GroupsPage).results.map((x) => x.group_key)
  assert.deepEqual(await search('search=acme'), ['c3'], 'by the name property, any case')
  assert.deepEqual(await search('search=C5'), ['c5'], 'by the key')
  assert.deepEqual(await search('group_key=c1'), ['c1'])
  assert.deepEqual(await search('search=nothing'), [])
  assert.deepEqual(((await api.get('/groups/?group_type_index=1')).json() as GroupsPage).results.map((x) => x.group_key), ['p1'])
  assert.deepEqual(((await api.get('/groups/?group_type_index=2')).json() as GroupsPage).results, [])
})

test('groups/find returns one group by type and key, 404 when absent; missing or bad parameters are 400s naming them', async (t) => {
  const app = await buildTestApp(t)
  await capture(app, [identify('company', 'acme', { plan: 'enterprise' })])
  await waitForEvents(app, 1)
  const api = privateApi(app)
  const found = await api.get('/groups/find/?group_type_index=0&group_key=acme')
  assert.equal(found.statusCode, 200, found.body)
  assert.deepEqual({ ...(found.json() as object), created_at: undefined }, { group_type_index: 0, group_key: 'acme', group_properties: { plan: 'enterprise' }, created_at: undefined, notebook: null })
  assert.equal((await api.get('/groups/find/?group_type_index=0&group_key=nope')).statusCode, 404)
  assert.equal((await api.get('/groups/find/?group_type_index=1&group_key=acme')).statusCode, 404)

  const expect400 = async (path: string, attr: string, code: string) => {
    const res = await api.get(path)
    assert.equal(res.statusCode, 400, `${path}: ${res.body}`)
    assert.equal(res.json().type, 'validation_error')
    assert.equal(res.json().attr, attr)
    assert.equal(res.json().code, code)
  }
  await expect400('/groups/', 'group_type_index', 'required')
  await expect400('/groups/?group_type_index=7', 'group_type_index', 'invalid')
  await expect400('/groups/?group_type_index=x', 'group_type_index', 'invalid')
  await expect400('/groups/find/?group_key=acme', 'group_type_index', 'required')
  await expect400('/groups/find/?group_type_index=0', 'group_key', 'required')
  const junkCursor = await api.get('/groups/?group_type_index=0&cursor=%%%not-base64')
  assert.equal(junkCursor.statusCode, 200, 'an unreadable cursor starts over, as PostHog does')
  assert.equal(junkCursor.json().results.length, 1)

  const stranger = await strangerWithProject(app)
  const theirs = privateApi(app, stranger.headers, stranger.projectId)
  assert.deepEqual((await theirs.get('/groups/?group_type_index=0')).json().results, [])
  assert.equal((await theirs.get('/groups/find/?group_type_index=0&group_key=acme')).statusCode, 404)
})
