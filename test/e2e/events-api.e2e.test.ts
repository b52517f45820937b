import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { fileTestProjects, type TestApp } from '../helpers/test-app.ts'
import { readAllEvents, waitForEvents, type EventJson } from '../helpers/capture-helpers.ts'
import { queryOk } from '../helpers/query-data.ts'

// One app per engine for the file, a project of its own per test: each test reads only its own events.
const project = fileTestProjects()

async function capture(app: TestApp, batch: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch, ...extra } })
  assert.equal(res.statusCode, 200, res.body)
}

async function list(app: TestApp, query: string): Promise<{ next: string | null; results: EventJson[] }> {
  const res = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/?${query}`, headers: app.auth })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

testOnEachEngine('stored events keep uuid, name, distinct_id, all properties, elements chain and a clock-skew corrected timestamp', async (_t, engine) => {
  const app = await project(engine)
  const uuid = crypto.randomUUID()
  const sentAt = new Date(Date.now() + 60 * 60 * 1000) // the client's clock runs an hour ahead
  const clientTs = new Date(sentAt.getTime() - 10_000) // captured 10 s before sending
  await capture(app, [{
    uuid,
    event: '$autocapture',
    distinct_id: 'user-1',
    timestamp: clientTs.toISOString(),
    $set: { email: 'a@example.com' },
    properties: {
      $set_once: { first: 'x' },
      nested: { a: [1, 2] },
      $elements: [{ tag_name: 'button', attr__class: 'btn primary', $el_text: 'Buy', nth_child: 1, nth_of_type: 1 }, { tag_name: 'div' }],
    },
  }], { sent_at: sentAt.toISOString() })
  const before = Date.now()
  const [e] = await waitForEvents(app, 1)
  assert.equal(e!.id, uuid)
  assert.equal(e!.event, '$autocapture')
  assert.equal(e!.distinct_id, 'user-1')
  assert.deepEqual(e!.properties.nested, { a: [1, 2] })
  assert.deepEqual(e!.properties.$set, { email: 'a@example.com' })
  assert.deepEqual(e!.properties.$set_once, { first: 'x' })
  assert.equal(e!.properties.$elements, undefined)
  assert.match(e!.elements_chain, /^button\.btn\.primary:/)
  assert.match(e!.elements_chain, /;div:/)
  // The person of user-1, as PostHog's events API shows it (persons-api.e2e.test.ts covers merges).
  assert.deepEqual({ ...(e!.person as object), uuid: undefined }, { uuid: undefined, is_identified: false, distinct_ids: ['user-1'], properties: { email: 'a@example.com' } })
  // now + (timestamp - sent_at) = about 10 s before the server received it, not an hour ahead.
  const ts = Date.parse(e!.timestamp)
  assert.ok(ts <= before - 9_000 && ts > before - 60_000, `timestamp ${e!.timestamp}`)
  assert.match(e!.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/)
})

testOnEachEngine('an invalid client uuid is replaced by a server UUIDv7', async (_t, engine) => {
  const app = await project(engine)
  await capture(app, [{ uuid: 'not-a-uuid', event: 'x', distinct_id: 'u' }])
  const [e] = await waitForEvents(app, 1)
  assert.match(e!.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
})

testOnEachEngine('a timestamp more than 23 hours ahead is clamped to the receive time', async (_t, engine) => {
  const app = await project(engine)
  const start = Date.now()
  await capture(app, [{ event: 'future', distinct_id: 'u', timestamp: new Date(start + 48 * 3600_000).toISOString() }])
  const [e] = await waitForEvents(app, 1)
  const ts = Date.parse(e!.timestamp)
  assert.ok(ts >= start - 1000 && ts <= Date.now() + 1000)
})

testOnEachEngine('the list is newest first and filters by event, distinct_id, after, before and properties', async (_t, engine) => {
  const app = await project(engine)
  const base = Date.parse('2024-03-01T00:00:00Z')
  const at = (m: number) => new Date(base + m * 60_000).toISOString()
  await capture(app, [
    { event: 'view', distinct_id: 'a', timestamp: at(1), properties: { plan: 'pro', n: 5, url: 'https://x.test/Pricing' } },
    { event: 'view', distinct_id: 'b', timestamp: at(2), properties: { plan: 'free', n: 50 } },
    { event: 'click', distinct_id: 'a', timestamp: at(3), properties: { plan: 'pro' } },
  ])
  await waitForEvents(app, 3)
  const names = (r: { results: EventJson[] }) => r.results.map((e) => `${e.event}:${e.distinct_id}`)
  assert.deepEqual(names(await list(app, '')), ['click:a', 'view:b', 'view:a'])
  assert.deepEqual(names(await list(app, 'event=view')), ['view:b', 'view:a'])
  assert.deepEqual(names(await list(app, 'distinct_id=a')), ['click:a', 'view:a'])
  assert.deepEqual(names(await list(app, `after=${encodeURIComponent(at(1))}`)), ['click:a', 'view:b'])
  assert.deepEqual(names(await list(app, `before=${encodeURIComponent(at(3))}`)), ['view:b', 'view:a'])
  const props = (p: unknown) => `properties=${encodeURIComponent(JSON.stringify(p))}`
  assert.deepEqual(names(await list(app, props([{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }]))), ['click:a', 'view:a'])
  assert.deepEqual(names(await list(app, props([{ key: 'plan', value: ['free', 'x'] }]))), ['view:b'])
  assert.deepEqual(names(await list(app, props([{ key: 'n', value: 10, operator: 'gt' }]))), ['view:b'])
  assert.deepEqual(names(await list(app, props([{ key: 'url', value: 'pricing', operator: 'icontains' }]))), ['view:a'])
  assert.deepEqual(names(await list(app, props([{ key: 'n', operator: 'is_not_set' }]))), ['click:a'])
})

testOnEachEngine('cursor pagination through next visits every event once, even when timestamps tie', async (_t, engine) => {
  const app = await project(engine)
  const ts = new Date().toISOString()
  await capture(app, Array.from({ length: 25 }, (_, i) => ({ event: 'p', distinct_id: `d${i}`, timestamp: ts })))
  await waitForEvents(app, 25)
  const seen: string[] = []
  let page = await list(app, 'limit=10')
  for (;;) {
    seen.push(...page.results.map((e) => e.id))
    if (!page.next) break
    const next = new URL(page.next)
    assert.ok(next.searchParams.has('before'))
    page = await list(app, next.searchParams.toString())
  }
  assert.equal(seen.length, 25)
  assert.equal(new Set(seen).size, 25)
})

testOnEachEngine('limit/offset pagination returns next with the following offset', async (_t, engine) => {
  const app = await project(engine)
  await capture(app, Array.from({ length: 5 }, (_, i) => ({ event: 'o', distinct_id: `d${i}` })))
  await waitForEvents(app, 5)
  const first = await list(app, 'limit=2&offset=0')
  assert.equal(first.results.length, 2)
  assert.equal(new URL(first.next!).searchParams.get('offset'), '2')
  const last = await list(app, 'limit=2&offset=4')
  assert.equal(last.results.length, 1)
  assert.equal(last.next, null)
  assert.equal((await readAllEvents(app)).length, 5)
})

testOnEachEngine('one event is read by uuid; an unknown uuid is 404', async (_t, engine) => {
  const app = await project(engine)
  const uuid = crypto.randomUUID()
  await capture(app, [{ uuid, event: 'one', distinct_id: 'u', properties: { k: 'v' } }])
  await waitForEvents(app, 1)
  const res = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/${uuid}/`, headers: app.auth })
  assert.equal(res.statusCode, 200)
  assert.equal(res.json().id, uuid)
  assert.equal(res.json().properties.k, 'v')
  const missing = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/${crypto.randomUUID()}/`, headers: app.auth })
  assert.equal(missing.statusCode, 404)
  assert.equal(missing.json().code, 'not_found')
})

testOnEachEngine('the events API needs a personal API key and rejects bad filters with 400', async (_t, engine) => {
  const app = await project(engine)
  const anon = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/` })
  assert.equal(anon.statusCode, 401)
  const badProps = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/?properties=nope`, headers: app.auth })
  assert.equal(badProps.statusCode, 400)
  assert.equal(badProps.json().attr, 'properties')
  const badDate = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/?after=yesterdayish`, headers: app.auth })
  assert.equal(badDate.statusCode, 400)
  assert.equal(badDate.json().attr, 'after')
})

testOnEachEngine('icontains is a literal substring in the events API, as in the query engine: % and _ are plain characters', async (_t, engine) => {
  const app = await project(engine)
  const values = ['100%', '1000', 'a_b', 'axb', 'A_B!']
  await capture(app, values.map((v, i) => ({ event: 'e', distinct_id: `d${i}`, properties: { v } })))
  await waitForEvents(app, values.length)
  const props = (p: unknown) => `properties=${encodeURIComponent(JSON.stringify(p))}`
  const viaApi = async (needle: string) => (await list(app, props([{ key: 'v', value: needle, operator: 'icontains' }]))).results.map((e) => e.properties.v).sort()
  const viaQuery = async (needle: string) => {
    const res = await queryOk(app, { kind: 'EventsQuery', select: ['properties.v'], properties: [{ key: 'v', value: needle, operator: 'icontains', type: 'event' }] })
    return res.results.map((r: unknown[]) => r[0]).sort()
  }
  for (const [needle, want] of [['0%', ['100%']], ['a_b', ['A_B!', 'a_b']], ['%', ['100%']], ['_', ['A_B!', 'a_b']]] as const) {
    assert.deepEqual(await viaApi(needle), [...want], `events API, icontains ${needle}`)
    assert.deepEqual(await viaQuery(needle), [...want], `query engine, icontains ${needle}`)
  }
})

testOnEachEngine('the events API runs every operator of the event SQL layer and checks its value shape', async (_t, engine) => {
  const app = await project(engine)
  await capture(app, [
    { event: 'e', distinct_id: 'a', properties: { v: '1.2.3', n: 5, s: 'Alpha' } },
    { event: 'e', distinct_id: 'b', properties: { v: '2.0.0', n: 15, s: 'beta' } },
  ])
  await waitForEvents(app, 2)
  const props = (p: unknown) => `properties=${encodeURIComponent(JSON.stringify(p))}`
  const ids = async (f: Record<string, unknown>) => (await list(app, props([f]))).results.map((e) => e.distinct_id).sort()
  assert.deepEqual(await ids({ key: 'v', operator: 'semver_gte', value: '2.0.0' }), ['b'])
  assert.deepEqual(await ids({ key: 'n', operator: 'between', value: [1, 10] }), ['a'])
  assert.deepEqual(await ids({ key: 's', operator: 'starts_with', value: 'al' }), ['a'])
  assert.deepEqual(await ids({ key: 's', operator: 'icontains_multi', value: ['zz', 'ET'] }), ['b'])
  const bad = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/?${props([{ key: 'n', operator: 'between', value: [10, 1] }])}`, headers: app.auth })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().attr, 'properties')
  const cohort = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/?${props([{ key: 'id', operator: 'in', value: 1 }])}`, headers: app.auth })
  assert.equal(cohort.statusCode, 400)
})
