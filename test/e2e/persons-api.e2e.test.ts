import assert from 'node:assert/strict'
import { test } from 'node:test'
import { testOnEachEngine } from '../helpers/engines.ts'
import { fileTestProjects, type TestApp } from '../helpers/test-app.ts'
import { readAllEvents, waitForEvents } from '../helpers/capture-helpers.ts'
import { privateApi, strangerWithProject } from '../helpers/private-api.ts'
import { eventually } from '../helpers/eventually.ts'

// One app for the file, a project of its own per test: the counts and lists below are the test's own.
const project = fileTestProjects()

const capture = async (app: TestApp, batch: object[]) => {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
}
let clock = Date.parse('2024-06-01T00:00:00Z')
const ev = (event: string, distinctId: string, properties: Record<string, unknown> = {}) => ({
  event, distinct_id: distinctId, uuid: crypto.randomUUID(), timestamp: new Date((clock += 1000)).toISOString(), properties,
})

interface PersonJson {
  type: string
  id: string
  uuid: string
  name: string
  distinct_ids: string[]
  properties: Record<string, unknown>
  is_identified: boolean
  created_at: string
}
interface ListJson {
  results: PersonJson[]
  next: string | null
  previous: string | null
  count?: number
}

/** Waits until the assertions in `fn` pass (the pipeline applies changes asynchronously). */
const settle = (fn: () => Promise<unknown>) => eventually(async () => (await fn(), true))
/** Person properties without the one the pipeline adds on creation (PostHog's `$creator_event_uuid`). */
function own(props: Record<string, unknown>): Record<string, unknown> {
  assert.match(String(props.$creator_event_uuid), /^[0-9a-f-]{36}$/)
  const { $creator_event_uuid: _, ...rest } = props
  return rest
}
const pathOf = (url: string) => new URL(url).pathname + new URL(url).search
async function list(app: TestApp, query: Record<string, string> = {}): Promise<ListJson> {
  const res = await privateApi(app).get(`/persons/?${new URLSearchParams(query)}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as ListJson
}
const ids = (body: ListJson) => body.results.map((p) => [...p.distinct_ids].sort().join(',')).sort()

/** u1 identified with a1 merged in (a1 sent a $set before), u2 separate; 5 events in all. */
async function seedTwoPersons(app: TestApp) {
  await capture(app, [
    ev('$pageview', 'a1', { $set: { plan: 'pro', seats: 12 } }),
    ev('$pageview', 'u2', { $set: { email: 'Two@Example.com', plan: 'free', seats: '3' } }),
  ])
  await waitForEvents(app, 2)
  await capture(app, [ev('$identify', 'u1', { $anon_distinct_id: 'a1', $set: { email: 'one@example.com' } }), ev('clicked', 'u1'), ev('clicked', 'u2')])
  await waitForEvents(app, 5)
}

test('persons list: the identify merge is one person with both distinct ids, PostHog shape, filters and search', async () => {
  const app = await project()
  await seedTwoPersons(app)
  const all = await list(app)
  assert.deepEqual(ids(all), ['a1,u1', 'u2'])
  assert.equal(all.next, null)
  assert.equal(all.previous, null)
  assert.equal('count' in all, false, 'count only with include_total')
  const u1 = all.results.find((p) => p.distinct_ids.includes('u1'))!
  assert.deepEqual(Object.keys(u1).sort(), ['created_at', 'distinct_ids', 'id', 'is_identified', 'name', 'properties', 'type', 'uuid'])
  assert.equal(u1.type, 'person')
  assert.equal(u1.id, u1.uuid)
  assert.match(u1.uuid, /^[0-9a-f-]{36}$/)
  assert.equal(u1.is_identified, true)
  assert.equal(u1.name, 'one@example.com')
  assert.deepEqual(own(u1.properties), { plan: 'pro', seats: 12, email: 'one@example.com' })
  assert.equal(all.results.find((p) => p.distinct_ids.includes('u2'))!.is_identified, false)

  assert.deepEqual(ids(await list(app, { distinct_id: 'a1' })), ['a1,u1'], 'the anonymous id finds the merged person')
  assert.deepEqual(ids(await list(app, { distinct_id: 'nobody' })), [])
  assert.deepEqual(ids(await list(app, { search: 'two@EXAMPLE' })), ['u2'], 'search: email contains, any case')
  assert.deepEqual(ids(await list(app, { search: 'a1' })), ['a1,u1'], 'search: a distinct id exactly')
  assert.deepEqual(ids(await list(app, { search: 'u' })), [], 'a distinct id is matched exactly, not by part')
  assert.deepEqual(ids(await list(app, { email: 'one@example.com' })), ['a1,u1'])
  const props = (filters: object[]) => list(app, { properties: JSON.stringify(filters) })
  assert.deepEqual(ids(await props([{ key: 'plan', value: 'PRO', operator: 'exact', type: 'person' }])), ['a1,u1'])
  assert.deepEqual(ids(await props([{ key: 'plan', value: ['pro', 'free'] }])), ['a1,u1', 'u2'])
  assert.deepEqual(ids(await props([{ key: 'plan', value: 'pro', operator: 'is_not' }])), ['u2'])
  assert.deepEqual(ids(await props([{ key: 'email', value: 'example.com', operator: 'icontains' }])), ['a1,u1', 'u2'])
  assert.deepEqual(ids(await props([{ key: 'email', operator: 'is_set' }, { key: 'seats', value: 10, operator: 'gt' }])), ['a1,u1'])
  assert.deepEqual(ids(await props([{ key: 'seats', value: 5, operator: 'lt' }])), ['u2'], 'a numeric string compares as a number')
  assert.deepEqual(ids(await props([{ key: 'missing', operator: 'is_not_set' }])), ['a1,u1', 'u2'])
  assert.deepEqual(ids(await props([{ key: 'seats', value: [10, 20], operator: 'between' }])), ['a1,u1'])
  assert.deepEqual(ids(await props([{ key: 'email', value: '^one@.*\\.com$', operator: 'regex' }])), ['a1,u1'])
  assert.deepEqual(ids(await props([{ key: 'email', value: '(?i)^TWO@', operator: 'not_regex' }])), ['a1,u1'])
})

testOnEachEngine('persons: retrieve by uuid or numeric id; the events API shows each event person, anonymous events under the identified person', async (_t, engine) => {
  const app = await project(engine)
  await seedTwoPersons(app)
  const u1 = (await list(app, { distinct_id: 'u1' })).results[0]!
  const api = privateApi(app)
  const byUuid = await api.get(`/persons/${u1.uuid}/`)
  assert.equal(byUuid.statusCode, 200, byUuid.body)
  const detail = byUuid.json()
  assert.deepEqual(Object.keys(detail).sort(), ['created_at', 'distinct_ids', 'id', 'name', 'properties', 'uuid'])
  assert.equal(typeof detail.id, 'number')
  assert.equal(detail.uuid, u1.uuid)
  const byId = await api.get(`/persons/${detail.id}/`)
  assert.deepEqual(byId.json(), detail)
  assert.equal((await api.get(`/persons/${crypto.randomUUID()}/`)).statusCode, 404)
  assert.equal((await api.get('/persons/999999/')).statusCode, 404)
  const bad = await api.get('/persons/not-a-person/')
  assert.equal(bad.statusCode, 400)
  assert.match(bad.json().detail, /distinct_id=not-a-person/)

  const events = await readAllEvents(app)
  assert.equal(events.length, 5)
  for (const e of events.filter((x) => x.distinct_id === 'a1' || x.distinct_id === 'u1')) {
    assert.deepEqual(e.person, { uuid: u1.uuid, is_identified: true, distinct_ids: ['a1'], properties: { email: 'one@example.com' } })
  }
  const u2 = events.find((x) => x.distinct_id === 'u2')!.person as Record<string, unknown>
  assert.deepEqual(u2.properties, { email: 'Two@Example.com' }, 'only email, name and username, as PostHog')
  const one = await api.get(`/events/${events[0]!.id}/`)
  assert.deepEqual(one.json().person, events[0]!.person)
})

test('persons list pages with limit/offset links; include_total counts every match', async () => {
  const app = await project()
  await capture(app, ['p1', 'p2', 'p3', 'p4', 'p5'].map((d) => ev('$pageview', d, { $set: { n: Number(d[1]) } })))
  await waitForEvents(app, 5)
  const seen: string[] = []
  let page = await list(app, { limit: '2', include_total: '1' })
  assert.equal(page.count, 5)
  assert.equal(page.previous, null)
  for (let i = 0; ; i++) {
    assert.ok(page.results.length <= 2)
    seen.push(...page.results.map((p) => p.distinct_ids[0]!))
    if (page.next === null) break
    const res = await app.http.inject({ method: 'GET', url: pathOf(page.next), headers: app.auth })
    page = res.json() as ListJson
    assert.notEqual(page.previous, null)
    assert.ok(i < 5)
  }
  assert.deepEqual(seen, ['p5', 'p4', 'p3', 'p2', 'p1'], 'newest first, each once')
  const filtered = await list(app, { limit: '1', include_total: 'true', properties: JSON.stringify([{ key: 'n', value: 3, operator: 'gte' }]) })
  assert.equal(filtered.count, 3)
  assert.notEqual(filtered.next, null)
})

test('persons: update_property, PATCH and delete_property go through the pipeline; /decide sees them; values/ counts', async () => {
  const app = await project()
  const flag = await privateApi(app).post('/feature_flags/', {
    key: 'vip', filters: { groups: [{ properties: [{ key: 'tier', value: 'vip', type: 'person' }], rollout_percentage: 100 }] },
  })
  assert.equal(flag.statusCode, 201, flag.body)
  const decide = async (id: string) => {
    const res = await app.http.inject({ method: 'POST', url: '/flags/?v=2', payload: { token: app.projectKey, distinct_id: id } })
    return (res.json() as { flags: Record<string, { enabled: boolean }> }).flags.vip!.enabled
  }
  await capture(app, [ev('$pageview', 'x1', { $set: { color: 'red' } }), ev('$pageview', 'x2', { $set: { color: 'red' } }), ev('$pageview', 'x3', { $set: { color: 'blue' } })])
  await waitForEvents(app, 3)
  assert.equal(await decide('x1'), false)
  const x1 = (await list(app, { distinct_id: 'x1' })).results[0]!
  const api = privateApi(app)
  const person = async () => own((await api.get(`/persons/${x1.uuid}/`)).json().properties as Record<string, unknown>)

  const set = await api.post(`/persons/${x1.uuid}/update_property/`, { key: 'tier', value: 'vip' })
  assert.equal(set.statusCode, 202, set.body)
  await settle(async () => assert.equal((await person()).tier, 'vip'))
  assert.equal(await decide('x1'), true, "the pipeline invalidated /decide's cache")

  const patch = await api.patch(`/persons/${x1.uuid}/`, { properties: { color: 'green', size: 2 } })
  assert.equal(patch.statusCode, 202, patch.body)
  await settle(async () => assert.deepEqual(await person(), { color: 'green', tier: 'vip', size: 2 }))

  const unset = await api.post(`/persons/${x1.uuid}/delete_property/`, { $unset: 'tier' })
  assert.equal(unset.statusCode, 201, unset.body)
  assert.deepEqual(unset.json(), { success: true })
  await settle(async () => assert.deepEqual(await person(), { color: 'green', size: 2 }))
  assert.equal(await decide('x1'), false)
  // The person changes in the persons step, before the same micro-batch's events are stored: wait for those too.
  await settle(async () => {
    const events = await readAllEvents(app, { distinct_id: 'x1' })
    assert.deepEqual(events.map((e) => e.event).sort(), ['$delete_person_property', '$pageview', '$set', '$set'])
  })

  const values = await api.get('/persons/values/?key=color')
  assert.deepEqual(values.json(), [{ name: 'blue', count: 1 }, { name: 'green', count: 1 }, { name: 'red', count: 1 }])
  await capture(app, [ev('$pageview', 'x4', { $set: { color: 'red' } })])
  await settle(async () => assert.deepEqual((await api.get('/persons/values/?key=color')).json()[0], { name: 'red', count: 2 }))
  assert.deepEqual((await api.get('/persons/values/?key=color&value=GRE')).json(), [{ name: 'green', count: 1 }])
  assert.deepEqual((await api.get('/persons/values/')).json(), [])
})

test('persons: validation errors name the field; POST is refused; another project sees nothing', async () => {
  const app = await project()
  await capture(app, [ev('$pageview', 'v1', { $set: { a: 1 } })])
  await waitForEvents(app, 1)
  const v1 = (await list(app)).results[0]!
  const api = privateApi(app)
  const expect400 = async (res: { statusCode: number; json: () => any }, attr: string | null, code?: string) => {
    assert.equal(res.statusCode, 400)
    const body = res.json()
    assert.equal(body.type, 'validation_error')
    assert.equal(body.attr, attr)
    if (code) assert.equal(body.code, code)
  }
  await expect400(await api.post(`/persons/${v1.uuid}/update_property/`, { key: 'k' }), 'value', 'required')
  await expect400(await api.post(`/persons/${v1.uuid}/update_property/`, { value: 1 }), 'key', 'required')
  await expect400(await api.patch(`/persons/${v1.uuid}/`, {}), 'properties', 'required')
  await expect400(await api.patch(`/persons/${v1.uuid}/`, { properties: [1] }), 'properties')
  await expect400(await api.post(`/persons/${v1.uuid}/delete_property/`, {}), '$unset', 'required')
  await expect400(await api.get('/persons/?properties=not-json'), 'properties')
  await expect400(await api.get(`/persons/?properties=${encodeURIComponent('{"key":"a"}')}`), 'properties')
  await expect400(await api.get(`/persons/?properties=${encodeURIComponent('[{"key":"a","operator":"nope"}]')}`), 'properties')
  await expect400(await api.get(`/persons/?properties=${encodeURIComponent('[{"key":"a","operator":"regex","value":"(a)\\\\1"}]')}`), 'properties')
  await expect400(await api.get(`/persons/?properties=${encodeURIComponent('[{"key":"a","operator":"regex","value":"(?U)a+"}]')}`), 'properties')
  await expect400(await api.get(`/persons/?properties=${encodeURIComponent('[{"key":"a","operator":"in","value":1}]')}`), 'properties')
  await expect400(await api.get(`/persons/?properties=${encodeURIComponent('[{"key":"a","type":"event","value":1}]')}`), 'properties')
  await expect400(await api.get('/persons/?distinct_id=a&distinct_id=b'), 'distinct_id')
  assert.equal((await api.post('/persons/', {})).statusCode, 405)
  assert.equal((await api.post(`/persons/${crypto.randomUUID()}/update_property/`, { key: 'k', value: 1 })).statusCode, 404)

  const stranger = await strangerWithProject(app)
  const theirs = privateApi(app, stranger.headers, stranger.projectId)
  assert.deepEqual((await theirs.get('/persons/')).json().results, [])
  assert.equal((await theirs.get(`/persons/${v1.uuid}/`)).statusCode, 404)
  assert.equal((await theirs.delete(`/persons/${v1.uuid}/`)).statusCode, 404)
  assert.equal((await theirs.post(`/persons/${v1.uuid}/update_property/`, { key: 'k', value: 1 })).statusCode, 404)
  assert.notEqual((await privateApi(app, stranger.headers).get('/persons/')).statusCode, 200, 'not a member of the first project')
  assert.equal((await api.get(`/persons/${v1.uuid}/`)).statusCode, 200, 'still there')
})

testOnEachEngine('persons: DELETE removes the person (decide forgets it); ?delete_events=true removes every event that resolves to it', async (_t, engine) => {
  const app = await project(engine)
  const flag = await privateApi(app).post('/feature_flags/', {
    key: 'pro', filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 }] },
  })
  assert.equal(flag.statusCode, 201, flag.body)
  const decide = async (id: string) => {
    const res = await app.http.inject({ method: 'POST', url: '/flags/?v=2', payload: { token: app.projectKey, distinct_id: id } })
    return (res.json() as { flags: Record<string, { enabled: boolean }> }).flags.pro!.enabled
  }
  await seedTwoPersons(app)
  assert.equal(await decide('a1'), true, 'cached by /decide before the deletion')
  const api = privateApi(app)
  const u1 = (await list(app, { distinct_id: 'u1' })).results[0]!
  const u2 = (await list(app, { distinct_id: 'u2' })).results[0]!

  // Without delete_events the events stay, their person gone.
  const del2 = await api.delete(`/persons/${u2.uuid}/`)
  assert.equal(del2.statusCode, 202, del2.body)
  assert.equal((await api.get(`/persons/${u2.uuid}/`)).statusCode, 404)
  let events = await readAllEvents(app)
  assert.equal(events.length, 5)
  for (const e of events.filter((x) => x.distinct_id === 'u2')) assert.equal(e.person, null)

  // a1's events were stored under the anonymous person before the merge: they go too.
  const del1 = await app.http.inject({ method: 'DELETE', url: `/api/projects/${app.projectId}/persons/${u1.uuid}/?delete_events=true`, headers: app.auth })
  assert.equal(del1.statusCode, 202, del1.body)
  events = await readAllEvents(app)
  assert.deepEqual(events.map((e) => e.distinct_id).sort(), ['u2', 'u2'])
  assert.equal(await decide('a1'), false, "/decide's cache was invalidated")
  assert.equal(await decide('u1'), false)
  assert.deepEqual((await list(app)).results, [])
  assert.equal((await api.delete(`/persons/${u1.uuid}/`)).statusCode, 404)

  // The distinct id is free again: a new event makes a new person.
  await capture(app, [ev('$pageview', 'u1', { $set: { plan: 'free' } })])
  await waitForEvents(app, 3)
  const again = await eventually(async () => {
    const body = await list(app, { distinct_id: 'u1' })
    assert.equal(body.results.length, 1)
    return body.results[0]!
  })
  assert.notEqual(again.uuid, u1.uuid)
  assert.deepEqual(own(again.properties), { plan: 'free' })
})
