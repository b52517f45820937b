import assert from 'node:assert/strict'
import { test } from 'node:test'
import { testOnEachEngine } from '../helpers/engines.ts'
import { buildTestApp, fileTestProjects } from '../helpers/test-app.ts'
import { privateApi, strangerWithProject } from '../helpers/private-api.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'

const FIELDS = [
  'id', 'name', 'description', 'tags', 'post_to_chat', 'chat_message_format', 'post_to_slack', 'slack_message_format', 'steps',
  'created_at', 'created_by', 'deleted', 'is_calculating', 'last_calculated_at', 'team_id', 'is_action',
]
const STEP_FIELDS = ['id', 'event', 'tag_name', 'text', 'text_matching', 'href', 'href_matching', 'selector', 'url', 'name', 'url_matching', 'properties']
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

// One app for the file, a project of its own per test: the counts and lists below are the test's own.
const project = fileTestProjects()

const STEP = {
  event: '$autocapture', tag_name: 'a', text: 'Buy', text_matching: 'exact', href: '/buy', href_matching: 'contains',
  selector: 'div > a', url: 'shop', name: 'click buy', url_matching: 'regex',
  properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }],
}

test('actions: create returns 201 with every field, step ids and created_by', async () => {
  const app = await project()
  const api = privateApi(app)
  const res = await api.post('/actions/', { name: 'Bought', description: 'd', tags: ['x'], steps: [STEP] })
  assert.equal(res.statusCode, 201)
  const a = res.json()
  for (const f of FIELDS) assert.ok(f in a, f)
  assert.deepEqual(Object.keys(a.steps[0]), STEP_FIELDS)
  assert.equal(typeof a.steps[0].id, 'string')
  const { id: _id, ...rest } = a.steps[0]
  assert.deepEqual(rest, STEP)
  assert.equal(a.is_action, true)
  assert.equal(a.is_calculating, false)
  assert.equal(a.deleted, false)
  assert.equal(a.team_id, app.projectId)
  assert.match(a.created_at, ISO)
  assert.match(a.last_calculated_at, ISO)
  assert.equal(a.created_by.email, 'owner@tally.local')
  assert.deepEqual((await api.get(`/actions/${a.id}/`)).json(), a)
})

test('actions: both chat spellings are accepted and returned', async () => {
  const app = await project()
  const api = privateApi(app)
  const a = (await api.post('/actions/', { name: 'a', post_to_slack: true, slack_message_format: '[action.name]' })).json()
  assert.equal(a.post_to_chat, true)
  assert.equal(a.chat_message_format, '[action.name]')
  assert.equal(a.post_to_slack, true)
  const b = (await api.patch(`/actions/${a.id}/`, { post_to_chat: false, chat_message_format: 'x' })).json()
  assert.equal(b.post_to_slack, false)
  assert.equal(b.slack_message_format, 'x')
})

test('actions: step properties in object form are stored and returned as the list form', async () => {
  const app = await project()
  const api = privateApi(app)
  const a = (await api.post('/actions/', { name: 'a', steps: [{ event: 'e', properties: { plan: 'pro', n: 3 } }] })).json()
  assert.deepEqual(a.steps[0].properties, [
    { key: 'plan', value: 'pro', operator: 'exact', type: 'event' },
    { key: 'n', value: 3, operator: 'exact', type: 'event' },
  ])
  assert.equal(a.steps[0].url_matching, 'contains')
})

test('actions: step ids are kept when sent back; steps left out are removed', async () => {
  const app = await project()
  const api = privateApi(app)
  const a = (await api.post('/actions/', { name: 'a', steps: [{ event: 'one' }, { event: 'two' }] })).json()
  const [one] = a.steps
  const b = (await api.patch(`/actions/${a.id}/`, { steps: [{ ...one, event: 'uno' }, { event: 'three' }] })).json()
  assert.equal(b.steps.length, 2)
  assert.equal(b.steps[0].id, one.id)
  assert.equal(b.steps[0].event, 'uno')
  assert.ok(!a.steps.some((s: { id: string }) => s.id === b.steps[1].id))
  assert.deepEqual((await api.patch(`/actions/${a.id}/`, { name: 'renamed' })).json().steps, b.steps, 'steps untouched when absent')
})

test('actions: list has the pagination envelope with absolute links and hides deleted actions', async () => {
  const app = await project()
  const api = privateApi(app)
  const ids: number[] = []
  for (let i = 0; i < 3; i++) ids.push((await api.post('/actions/', { name: `a${i}` })).json().id)
  const page = (await api.get('/actions/?limit=2')).json()
  assert.equal(page.count, 3)
  assert.equal(page.previous, null)
  assert.equal(page.next, `http://localhost${api.base}/actions/?limit=2&offset=2`)
  const last = (await api.get('/actions/?limit=2&offset=2')).json()
  assert.equal(last.next, null)
  assert.equal(last.previous, `http://localhost${api.base}/actions/?limit=2`)
  await api.patch(`/actions/${ids[0]}/`, { deleted: true })
  const after = (await api.get('/actions/')).json()
  assert.equal(after.count, 2)
  assert.ok(!after.results.some((a: { id: number }) => a.id === ids[0]))
})

test('actions: PATCH deleted=true keeps the record; DELETE answers 405 with no body and changes nothing', async () => {
  const app = await project()
  const api = privateApi(app)
  const { id } = (await api.post('/actions/', { name: 'x' })).json()
  const del = await api.delete(`/actions/${id}/`)
  assert.equal(del.statusCode, 405)
  assert.equal(del.body, '')
  assert.equal((await api.get(`/actions/${id}/`)).json().deleted, false)
  assert.equal((await api.patch(`/actions/${id}/`, { deleted: true })).json().deleted, true)
  const kept = await api.get(`/actions/${id}/`)
  assert.equal(kept.statusCode, 200)
  assert.equal(kept.json().deleted, true)
  assert.equal((await api.patch(`/actions/${id}/`, { deleted: false })).json().deleted, false)
})

test('actions: names are unique among live actions; a deleted action frees its name', async () => {
  const app = await project()
  const api = privateApi(app)
  const first = (await api.post('/actions/', { name: 'Signup' })).json()
  const dup = await api.post('/actions/', { name: 'Signup' })
  assert.equal(dup.statusCode, 400)
  assert.deepEqual(dup.json(), {
    type: 'validation_error', code: 'unique', attr: 'name', detail: `This project already has an action with this name, ID ${first.id}`,
  })
  await api.patch(`/actions/${first.id}/`, { deleted: true })
  const second = await api.post('/actions/', { name: 'Signup' })
  assert.equal(second.statusCode, 201)
  assert.equal((await api.patch(`/actions/${first.id}/`, { deleted: false })).json().attr, 'name', 'restoring would collide')
})

test('actions: every validation error is a 400 validation_error naming the field', async () => {
  const app = await project()
  const api = privateApi(app)
  const cases: [unknown, string | null, string][] = [
    [{ name: '  ' }, 'name', 'blank'],
    [{ name: 'x'.repeat(401) }, 'name', 'max_length'],
    [{ name: true }, 'name', 'invalid_input'],
    [{ description: [] }, 'description', 'invalid_input'],
    [{ tags: {} }, 'tags', 'not_a_list'],
    [{ post_to_chat: 'sometimes' }, 'post_to_chat', 'invalid_input'],
    [{ post_to_slack: {} }, 'post_to_slack', 'invalid_input'],
    [{ chat_message_format: 'x'.repeat(601) }, 'chat_message_format', 'max_length'],
    [{ slack_message_format: {} }, 'slack_message_format', 'invalid_input'],
    [{ deleted: 'x' }, 'deleted', 'invalid_input'],
    [{ last_calculated_at: 'yesterday' }, 'last_calculated_at', 'invalid_input'],
    [{ steps: {} }, 'steps', 'not_a_list'],
    [{ steps: ['x'] }, 'steps__0', 'not_a_dict'],
    [{ steps: [{ event: {} }] }, 'steps__0__event', 'invalid_input'],
    [{ steps: [{ url_matching: 'fuzzy' }] }, 'steps__0__url_matching', 'invalid_choice'],
    [{ steps: [{}, { text_matching: 'like' }] }, 'steps__1__text_matching', 'invalid_choice'],
    [{ steps: [{ href_matching: 1 }] }, 'steps__0__href_matching', 'invalid_choice'],
    [{ steps: [{ properties: 'x' }] }, 'steps__0__properties', 'not_a_dict'],
    [{ steps: [{ properties: ['x'] }] }, 'steps__0__properties__0', 'not_a_dict'],
    ['"just a string"', null, 'invalid_input'],
  ]
  for (const [body, attr, code] of cases) {
    const res = typeof body === 'string' ? await api.raw('POST', '/actions/', body) : await api.post('/actions/', body)
    assert.equal(res.statusCode, 400, JSON.stringify(body))
    assert.equal(res.json().type, 'validation_error')
    assert.equal(res.json().attr, attr, JSON.stringify(body))
    assert.equal(res.json().code, code, JSON.stringify(body))
  }
  assert.equal((await api.post('/actions/', { steps: [{ url_matching: 'fuzzy' }] })).json().detail, '"fuzzy" is not a valid choice.')
  const malformed = await api.raw('POST', '/actions/', '{"name": "x",')
  assert.equal(malformed.statusCode, 400)
  assert.equal(malformed.json().type, 'validation_error')
  assert.equal((await api.get('/actions/')).json().count, 0, 'nothing half-written')
})

test('actions: last_calculated_at is accepted in requests', async () => {
  const app = await project()
  const api = privateApi(app)
  const a = (await api.post('/actions/', { name: 'a', last_calculated_at: '2024-05-01T10:00:00Z' })).json()
  assert.equal(a.last_calculated_at, '2024-05-01T10:00:00.000Z')
  const b = (await api.patch(`/actions/${a.id}/`, { last_calculated_at: '2024-06-01T12:30:00+02:00' })).json()
  assert.equal(b.last_calculated_at, '2024-06-01T10:30:00.000Z')
})

test('actions: format=csv on list and retrieve gives CSV with a header row; format=json the JSON', async () => {
  const app = await project()
  const api = privateApi(app)
  const empty = await api.get('/actions/?format=csv')
  assert.equal(empty.statusCode, 200)
  assert.match(empty.headers['content-type'] as string, /^text\/csv/)
  assert.equal(empty.body.split('\r\n')[0].split(',')[0], 'id')
  const a = (await api.post('/actions/', { name: 'Buy, now', steps: [{ event: '$pageview', properties: { plan: 'pro' } }] })).json()
  const list = await api.get('/actions/?format=csv')
  const [header, row, end] = list.body.split('\r\n')
  const cols = header.split(',')
  assert.ok(cols.includes('steps.0.event'))
  assert.ok(cols.includes('steps.0.properties.0.key'))
  assert.ok(cols.includes('created_by.email'))
  assert.equal(end, '')
  assert.ok(row.startsWith(`${a.id},"Buy, now",`))
  const one = await api.get(`/actions/${a.id}/?format=csv`)
  assert.match(one.headers['content-type'] as string, /^text\/csv/)
  assert.equal(one.body.split('\r\n')[0], header)
  assert.deepEqual((await api.get(`/actions/${a.id}/?format=json`)).json(), a)
  assert.equal((await api.get('/actions/?format=json')).json().count, 1)
  assert.equal((await api.get('/actions/?format=xml')).statusCode, 404)
})

test('actions: people without an action named is a 400 on actions (the people themselves: actions-people.e2e.test.ts)', async () => {
  const app = await project()
  const res = await privateApi(app).get('/actions/people/')
  assert.equal(res.statusCode, 400)
  assert.deepEqual([res.json().type, res.json().code, res.json().attr], ['validation_error', 'required', 'actions'])
})

testOnEachEngine('actions: count is the events of the last three months that match a step, counted in the event store', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const api = privateApi(app)
  const day = 24 * 3600 * 1000
  const ago = (days: number) => new Date(Date.now() - days * day).toISOString()
  const batch = [
    { event: '$pageview', distinct_id: 'a', properties: { $current_url: 'https://shop.example/pricing?x=1' }, timestamp: ago(1) },
    { event: '$pageview', distinct_id: 'b', properties: { $current_url: 'https://shop.example/pricing' }, timestamp: ago(80) },
    { event: '$pageview', distinct_id: 'c', properties: { $current_url: 'https://shop.example/pricing' }, timestamp: ago(100) },
    { event: '$pageview', distinct_id: 'd', properties: { $current_url: 'https://shop.example/about' }, timestamp: ago(1) },
    {
      event: '$autocapture', distinct_id: 'a', timestamp: ago(2),
      properties: { $event_type: 'click', $elements: [{ tag_name: 'button', attr__class: 'btn buy', $el_text: 'Buy now', nth_child: 1, nth_of_type: 1 }, { tag_name: 'div', attr__id: 'checkout' }] },
    },
    { event: '$autocapture', distinct_id: 'b', timestamp: ago(2), properties: { $event_type: 'click', $elements: [{ tag_name: 'a', $el_text: 'Help' }] } },
  ]
  assert.equal((await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })).statusCode, 200)
  await waitForEvents(app, batch.length)

  const action = await api.post('/actions/', {
    name: 'Pricing or buy',
    steps: [
      { event: '$pageview', url: '/pricing', url_matching: 'contains' },
      { event: '$autocapture', selector: '#checkout > button.buy', text: 'Buy now' },
    ],
  })
  assert.equal(action.statusCode, 201, action.body)
  const before = action.json().last_calculated_at
  const count = await api.get(`/actions/${action.json().id}/count/`)
  assert.equal(count.statusCode, 200, count.body)
  assert.deepEqual(count.json(), { count: 3 }, 'two pricing views within three months and the buy click')
  assert.ok((await api.get(`/actions/${action.json().id}/`)).json().last_calculated_at > before)

  const none = await api.post('/actions/', { name: 'No steps' })
  assert.deepEqual((await api.get(`/actions/${none.json().id}/count/`)).json(), { count: 0 })
  assert.equal((await api.get('/actions/999/count/')).statusCode, 404)
})

test('actions: projects are isolated between projects and users', async () => {
  const app = await project()
  const owner = privateApi(app)
  const { id } = (await owner.post('/actions/', { name: 'Shared name' })).json()
  const other = await strangerWithProject(app)
  const stranger = privateApi(app, other.headers, other.projectId)
  assert.equal((await stranger.get('/actions/')).json().count, 0)
  assert.equal((await stranger.get(`/actions/${id}/`)).statusCode, 404)
  assert.equal((await stranger.patch(`/actions/${id}/`, { deleted: true })).statusCode, 404)
  const theirs = await stranger.post('/actions/', { name: 'Shared name' })
  assert.equal(theirs.statusCode, 201, 'names are unique per project only')
  assert.equal(theirs.json().created_by.first_name, 'Stranger')
  assert.equal((await privateApi(app, other.headers, app.projectId).get('/actions/')).statusCode, 404)
  assert.equal((await owner.get(`/actions/${id}/`)).json().deleted, false)
})

test('actions: records survive a restart', async (t) => {
  const first = await buildTestApp(t)
  const a = (await privateApi(first).post('/actions/', { name: 'kept', steps: [{ event: 'e' }] })).json()
  const { dataDir, personalKey, projectId } = first
  await first.close()
  const again = await buildTestApp(t, { dataDir })
  const res = await privateApi(again, { authorization: `Bearer ${personalKey}` }, projectId).get(`/actions/${a.id}/`)
  assert.deepEqual(res.json(), a)
})
