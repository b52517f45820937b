import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { privateApi, strangerWithProject } from '../helpers/private-api.ts'

const DAY = 24 * 3600 * 1000
const capture = async (app: TestApp, batch: object[]) => {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
}
let n = 0
const ev = (event: string, distinctId: string, daysAgo: number, properties: Record<string, unknown> = {}) => ({
  event, distinct_id: distinctId, uuid: crypto.randomUUID(), timestamp: new Date(Date.now() - daysAgo * DAY + n++).toISOString(), properties,
})

interface PeopleJson {
  results: Array<{ people: Array<{ type: string; uuid: string; distinct_ids: string[]; is_identified: boolean; properties: Record<string, unknown> }>; count: number }>
  next: string | null
  previous: string | null
  missing_persons: number
}

/**
 * An action on `signed up` or a pricing page view. anon-1 signs up anonymously and is then identified
 * as user-1 (its event was stored under the anonymous person: only the override makes it user-1's);
 * user-2 views pricing; user-3 does something else; user-4 signed up 30 days ago; ghost signs up
 * without a person profile.
 */
async function seed(app: TestApp): Promise<number> {
  const action = await privateApi(app).post('/actions/', {
    name: 'Converted',
    steps: [{ event: 'signed up' }, { event: '$pageview', url: '/pricing', url_matching: 'contains' }],
  })
  assert.equal(action.statusCode, 201, action.body)
  await capture(app, [
    ev('signed up', 'anon-1', 2, { $set: { plan: 'pro' } }),
    ev('$pageview', 'user-2', 1, { $current_url: 'https://shop.example/pricing' }),
    ev('$pageview', 'user-3', 1, { $current_url: 'https://shop.example/about' }),
    ev('signed up', 'user-4', 30),
    ev('signed up', 'ghost', 1, { $process_person_profile: false }),
  ])
  await waitForEvents(app, 5)
  await capture(app, [ev('$identify', 'user-1', 1, { $anon_distinct_id: 'anon-1', $set: { email: 'one@example.com' } })])
  await waitForEvents(app, 6)
  return action.json().id as number
}

async function people(app: TestApp, query: string): Promise<PeopleJson> {
  const res = await privateApi(app).get(`/actions/people/?${query}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as PeopleJson
}
const idsOf = (body: PeopleJson) => body.results[0]!.people.map((p) => [...p.distinct_ids].sort().join(',')).sort()

testOnEachEngine('actions/people: the distinct persons whose events match, merged persons once with their anonymous events, in the date range', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const id = await seed(app)
  const actions = encodeURIComponent(JSON.stringify([{ id, type: 'actions' }]))
  const week = await people(app, `actions=${actions}`)
  assert.deepEqual(idsOf(week), ['anon-1,user-1', 'user-2'], 'last 7 days by default; user-3 matches no step; user-4 is older')
  assert.equal(week.results[0]!.count, 2)
  assert.equal(week.next, null)
  assert.equal(week.missing_persons, 1, "ghost's personless event matched, but there is no person to show")
  const merged = week.results[0]!.people.find((p) => p.distinct_ids.includes('user-1'))!
  assert.equal(merged.type, 'person')
  assert.equal(merged.is_identified, true)
  assert.equal(merged.properties.plan, 'pro')

  assert.deepEqual(idsOf(await people(app, `actions=${actions}&date_from=-60d`)), ['anon-1,user-1', 'user-2', 'user-4'])
  assert.deepEqual(idsOf(await people(app, `actions=${actions}&date_from=all`)), ['anon-1,user-1', 'user-2', 'user-4'])
  const day = (d: number) => new Date(Date.now() - d * DAY).toISOString().slice(0, 10)
  assert.deepEqual(idsOf(await people(app, `actions=${actions}&date_from=${day(31)}&date_to=${day(29)}`)), ['user-4'])
  assert.deepEqual(idsOf(await people(app, `action_id=${id}&date_from=-60d`)), ['anon-1,user-1', 'user-2', 'user-4'])
  assert.deepEqual(idsOf(await people(app, `entity_id=${id}&entity_type=actions`)), ['anon-1,user-1', 'user-2'])
})

testOnEachEngine('actions/people pages with limit/offset: each person once across the pages', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const id = await seed(app)
  const seen: string[] = []
  let path: string | null = `/api/projects/${app.projectId}/actions/people/?action_id=${id}&date_from=all&limit=1`
  for (let pages = 0; path; pages++) {
    const current: string = path
    const res = await app.http.inject({ method: 'GET', url: current, headers: app.auth })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json() as PeopleJson
    assert.ok(body.results[0]!.count <= 1)
    seen.push(...idsOf(body))
    if (pages > 0) assert.notEqual(body.previous, null)
    path = body.next ? new URL(body.next).pathname + new URL(body.next).search : null
    assert.ok(pages < 6)
  }
  // Four effective persons matched (ghost's among them, shown as missing): three are listed.
  assert.deepEqual(seen.sort(), ['anon-1,user-1', 'user-2', 'user-4'])
})

testOnEachEngine('actions/people: unknown action 404, bad parameters 400 naming them, another project cannot see the action', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const id = await seed(app)
  const api = privateApi(app)
  assert.equal((await api.get('/actions/people/?action_id=99999')).statusCode, 404)
  const expect400 = async (query: string, attr: string) => {
    const res = await api.get(`/actions/people/?${query}`)
    assert.equal(res.statusCode, 400, `${query}: ${res.body}`)
    assert.equal(res.json().type, 'validation_error')
    assert.equal(res.json().attr, attr)
  }
  await expect400('actions=not-json', 'actions')
  await expect400(`actions=${encodeURIComponent('[{"id":"x"}]')}`, 'actions')
  await expect400('action_id=-3', 'action_id')
  await expect400(`action_id=${id}&date_from=yesterday`, 'date_from')
  await expect400(`action_id=${id}&date_from=-1d&date_to=-9d`, 'date_to')
  await expect400(`entity_id=${id}&entity_type=events`, 'entity_type')

  const stranger = await strangerWithProject(app)
  assert.equal((await privateApi(app, stranger.headers, stranger.projectId).get(`/actions/people/?action_id=${id}`)).statusCode, 404)
})
