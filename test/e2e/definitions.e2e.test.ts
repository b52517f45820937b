import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileTestProjects, type TestApp } from '../helpers/test-app.ts'
import { eventually } from '../helpers/eventually.ts'
import { privateApi } from '../helpers/private-api.ts'

// One app for the file, a project of its own per test: the counts and lists below are the test's own.
const project = fileTestProjects()

interface PropertyJson { id: string; name: string; property_type: string | null; is_numerical: boolean; type: number; group_type_index: number | null; is_seen_on_filtered_events: boolean | null }
interface EventDefJson { id: string; name: string; created_at: string; last_seen_at: string; volume_30_day: null }
interface ListJson<T> { count: number; next: string | null; previous: string | null; results: T[] }

async function capture(app: TestApp, batch: unknown[], token = app.projectKey) {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: token, batch } })
  assert.equal(res.statusCode, 200, res.body)
}

async function list<T>(app: TestApp, path: string, headers = app.auth, projectId = app.projectId): Promise<ListJson<T>> {
  const res = await privateApi(app, headers, projectId).get(path)
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as ListJson<T>
}

const names = (l: ListJson<{ name: string }>) => l.results.map((r) => r.name)

/** Waits until the definitions step has recorded what `count` event names imply. */
const eventNamesSeen = (app: TestApp, count: number) =>
  eventually(async () => {
    const l = await list<EventDefJson>(app, '/event_definitions/')
    return l.count >= count && l
  })

const BATCH = [
  {
    event: 'signed up', distinct_id: 'u1',
    properties: {
      plan: 'pro', seats: 3, trial: true, started: '2026-01-02T10:00:00Z', utm_source: 'ads', legacy: 'false',
      login_time: 1_767_225_600, nested: { a: 1 }, $set: { email: 'a@x.io', age: 31 }, $set_once: { first_seen: '2026-01-01' },
    },
  },
  { event: 'signed up', distinct_id: 'u2', properties: { plan: 'free', seats: 1 } },
  { event: '$pageview', distinct_id: 'u1', properties: { $current_url: 'https://x.io/', $browser: 'Firefox' } },
  { event: 'purchase', distinct_id: 'u1', properties: { amount: 9.5, plan: 'pro' } },
]

test('captured events become event and property definitions with detected types', async () => {
  const app = await project()
  await capture(app, BATCH)
  const events = await eventNamesSeen(app, 3)
  assert.deepEqual(names(events), ['$pageview', 'purchase', 'signed up'])
  const first = events.results[0]!
  assert.match(first.id, /^[0-9a-f-]{36}$/)
  assert.ok(Date.parse(first.last_seen_at) >= Date.parse(first.created_at) - 1000)
  assert.equal(first.volume_30_day, null)

  const props = await list<PropertyJson>(app, '/property_definitions/?limit=100')
  const byName = new Map(props.results.map((p) => [p.name, p]))
  const typeOf = (n: string) => byName.get(n)?.property_type
  assert.equal(typeOf('plan'), 'String')
  assert.equal(typeOf('seats'), 'Numeric')
  assert.equal(byName.get('seats')!.is_numerical, true)
  assert.equal(byName.get('plan')!.is_numerical, false)
  assert.equal(typeOf('amount'), 'Numeric')
  assert.equal(typeOf('trial'), 'Boolean')
  assert.equal(typeOf('legacy'), 'Boolean')
  assert.equal(typeOf('started'), 'DateTime')
  assert.equal(typeOf('login_time'), 'DateTime')
  assert.equal(typeOf('utm_source'), 'String')
  assert.equal(typeOf('nested'), null)
  assert.equal(byName.get('plan')!.type, 1)
  assert.equal(byName.get('plan')!.group_type_index, null)
  // Ingestion's instructions are not event properties; their keys are person properties.
  for (const n of ['$set', '$set_once', 'email', 'age']) assert.ok(!byName.has(n), n)

  const person = await list<PropertyJson>(app, '/property_definitions/?type=person')
  assert.deepEqual(names(person), ['age', 'email', 'first_seen'])
  assert.deepEqual(person.results.map((p) => [p.property_type, p.type]), [['Numeric', 2], ['String', 2], ['DateTime', 2]])
})

test('property definition filters: search, is_numerical, excluded_properties, properties, event_names, paging', async () => {
  const app = await project()
  await capture(app, BATCH)
  await eventNamesSeen(app, 3)
  const get = (q: string) => list<PropertyJson>(app, `/property_definitions/?${q}`)

  assert.deepEqual(names(await get('search=PL')), ['plan'])
  assert.deepEqual(names(await get('search=time%20log')), ['login_time'])
  assert.deepEqual(names(await get('is_numerical=true')), ['amount', 'seats'])
  assert.deepEqual(names(await get(`search=s&excluded_properties=${encodeURIComponent('["seats","utm_source"]')}`)), ['$browser', 'nested', 'started'])
  assert.deepEqual(names(await get('properties=plan,amount,missing')), ['amount', 'plan'])
  // event_names: the properties seen with those events first, flagged; filter_by_event_names keeps only them.
  const purchase = encodeURIComponent('["purchase"]')
  const annotated = await get(`event_names=${purchase}&limit=4`)
  assert.deepEqual(names(annotated), ['$ip', 'amount', 'plan', '$browser'])
  assert.deepEqual(annotated.results.map((p) => p.is_seen_on_filtered_events), [true, true, true, false])
  const only = await get(`event_names=${purchase}&filter_by_event_names=true`)
  assert.deepEqual(names(only), ['$ip', 'amount', 'plan'])
  assert.equal(only.count, 3)
  assert.equal((await get('')).results[0]!.is_seen_on_filtered_events, null)

  const all = await get('')
  const page = await get('limit=2&offset=2')
  assert.equal(page.count, all.count)
  assert.deepEqual(names(page), names(all).slice(2, 4))
  assert.ok(page.next && page.previous)
})

test('event definition filters: search, event_type, ordering; one by id', async () => {
  const app = await project()
  await capture(app, BATCH)
  await eventNamesSeen(app, 3)
  const get = (q: string) => list<EventDefJson>(app, `/event_definitions/?${q}`)
  assert.deepEqual(names(await get('search=SIGN')), ['signed up'])
  assert.deepEqual(names(await get('event_type=event_custom')), ['purchase', 'signed up'])
  assert.deepEqual(names(await get('event_type=event_posthog')), ['$pageview'])
  assert.deepEqual(names(await get('ordering=-name')), ['signed up', 'purchase', '$pageview'])
  const one = (await get('search=purchase')).results[0]!
  const res = await privateApi(app).get(`/event_definitions/${one.id}/`)
  assert.equal(res.statusCode, 200)
  assert.equal(res.json().name, 'purchase')
  assert.equal((await privateApi(app).get('/event_definitions/not-a-uuid/')).statusCode, 404)
  const prop = (await list<PropertyJson>(app, '/property_definitions/?search=amount')).results[0]!
  assert.equal((await privateApi(app).get(`/property_definitions/${prop.id}/`)).json().name, 'amount')
})

test('group properties come from $groupidentify under their group type index', async () => {
  const app = await project()
  await capture(app, [
    { event: 'created', distinct_id: 'u1', properties: { $groups: { company: 'acme' } } },
    { event: '$groupidentify', distinct_id: 'u1', properties: { $group_type: 'company', $group_key: 'acme', $group_set: { industry: 'retail', employees: 40 } } },
  ])
  const group = await eventually(async () => {
    const l = await list<PropertyJson>(app, '/property_definitions/?type=group&group_type_index=0')
    return l.count >= 2 && l
  })
  assert.deepEqual(group.results.map((p) => [p.name, p.property_type, p.type, p.group_type_index]), [['employees', 'Numeric', 3, 0], ['industry', 'String', 3, 0]])
  assert.equal((await list<PropertyJson>(app, '/property_definitions/?type=group&group_type_index=1')).count, 0)
})

test('bad filters are 400s naming the field', async () => {
  const app = await project()
  const cases: Array<[string, string, string]> = [
    ['/property_definitions/?type=bogus', 'type', 'invalid_choice'],
    ['/property_definitions/?type=group', 'group_type_index', 'invalid_input'],
    ['/property_definitions/?type=person&group_type_index=0', 'group_type_index', 'invalid_input'],
    ['/property_definitions/?type=group&group_type_index=7', 'group_type_index', 'max_value'],
    ['/property_definitions/?event_names=notjson', 'event_names', 'invalid'],
    ['/property_definitions/?excluded_properties=%7B%7D', 'excluded_properties', 'not_a_list'],
    [`/property_definitions/?type=person&event_names=${encodeURIComponent('["a"]')}`, 'event_names', 'invalid_input'],
    ['/property_definitions/?is_numerical=maybe', 'is_numerical', 'invalid_input'],
    ['/event_definitions/?event_type=bogus', 'event_type', 'invalid_choice'],
    ['/event_definitions/?ordering=volume', 'ordering', 'invalid_choice'],
  ]
  for (const [path, attr, code] of cases) {
    const res = await privateApi(app).get(path)
    assert.equal(res.statusCode, 400, path)
    assert.deepEqual({ ...(res.json() as object), detail: undefined }, { type: 'validation_error', code, detail: undefined, attr }, path)
  }
})

test('definitions are per project', async () => {
  const app = await project()
  const other = await app.services.projects.createProject('Other project')
  await capture(app, [{ event: 'mine', distinct_id: 'u1', properties: { secret: 1 } }])
  await capture(app, [{ event: 'theirs', distinct_id: 'u1', properties: { other_prop: 'x' } }], other.apiToken)
  await eventNamesSeen(app, 1)
  const theirs = await eventually(async () => {
    const l = await list<EventDefJson>(app, '/event_definitions/', app.auth, other.project.id)
    return l.count >= 1 && l
  })
  assert.deepEqual(names(theirs), ['theirs'])
  assert.deepEqual(names(await list<EventDefJson>(app, '/event_definitions/')), ['mine'])
  // Capture adds `$ip` to every event of both projects.
  assert.deepEqual(names(await list<PropertyJson>(app, '/property_definitions/')), ['$ip', 'secret'])
  assert.deepEqual(names(await list<PropertyJson>(app, '/property_definitions/', app.auth, other.project.id)), ['$ip', 'other_prop'])
  const mine = (await list<EventDefJson>(app, '/event_definitions/')).results[0]!
  assert.equal((await privateApi(app, app.auth, other.project.id).get(`/event_definitions/${mine.id}/`)).statusCode, 404)
})

test('PostHog leaves ingestion-only event properties out; exclude_core_properties drops $ properties; seen_together', async () => {
  const app = await project()
  await capture(app, [
    { event: 'landed', distinct_id: 'u1', properties: { $initial_referrer: 'x', $groups: { company: 'acme' }, $browser: 'Chrome', color: 'red' } },
    { event: 'left', distinct_id: 'u1', properties: { size: 2 } },
  ])
  await eventNamesSeen(app, 2)
  const all = names(await list<PropertyJson>(app, '/property_definitions/'))
  assert.ok(all.includes('$browser') && all.includes('color'))
  for (const hidden of ['$initial_referrer', '$groups']) assert.ok(!all.includes(hidden), hidden)
  assert.deepEqual(names(await list<PropertyJson>(app, '/property_definitions/?exclude_core_properties=true')), ['color', 'size'])

  const together = await privateApi(app).get('/property_definitions/seen_together/?event_names=landed&event_names=left&event_names=never&property_name=color')
  assert.equal(together.statusCode, 200)
  assert.deepEqual(together.json(), { landed: true, left: false, never: false })
  const missing = await privateApi(app).get('/property_definitions/seen_together/?property_name=color')
  assert.equal(missing.statusCode, 400)
  assert.equal(missing.json().attr, 'event_names')
})

test('hostile names: NUL and lone surrogates are stored as U+FFFD, __proto__ is a name like any other, events still stored', async () => {
  const app = await project()
  const body = '{"api_key":"' + app.projectKey + '","batch":[{"event":"bad\\u0000name","distinct_id":"u1","properties":{"k\\u0000":1,"s\\ud800":"x","__proto__":{"polluted":true}}}]}'
  const res = await app.http.inject({ method: 'POST', url: '/batch/', headers: { 'content-type': 'application/json' }, payload: body })
  assert.equal(res.statusCode, 200, res.body)
  const events = await eventNamesSeen(app, 1)
  assert.deepEqual(names(events), ['bad\uFFFDname'])
  const props = names(await list<PropertyJson>(app, '/property_definitions/'))
  for (const n of ['k\uFFFD', 's\uFFFD', '__proto__']) assert.ok(props.includes(n), `${JSON.stringify(n)} in ${JSON.stringify(props)}`)
  assert.equal(({} as Record<string, unknown>).polluted, undefined)
})
