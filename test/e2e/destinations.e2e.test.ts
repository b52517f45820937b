import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi, strangerWithProject } from '../helpers/private-api.ts'
import { aBrowserEvent, waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts'

// The receivers listen on loopback, which the address checks refuse unless the operator allows it.
const ALLOW_LOOPBACK = { TALLY_WEBHOOK_ALLOW: '127.0.0.1', TALLY_WEBHOOK_RETRY_MIN_MS: '50', TALLY_WEBHOOK_RETRY_MAX_MS: '200' }

async function capture(app: Awaited<ReturnType<typeof buildTestApp>>, events: object[]) {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch: events } })
  assert.equal(res.statusCode, 200)
}

test('destinations: matching events are POSTed with the body template and an Idempotency-Key; others are not', async (t) => {
  const receiver = await startWebhookReceiver(t)
  const app = await buildTestApp(t, { env: ALLOW_LOOPBACK })
  const api = privateApi(app)
  const created = await api.post('/destinations/', {
    name: 'CRM',
    url: receiver.url(),
    headers: { 'x-token': 'secret' },
    filters: { events: ['signed up'], properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }] },
    body_template: '{"id": {event.uuid}, "what": "{event.event} by {event.distinct_id}", "plan": {event.properties.plan}, "project": {project.name}}',
  })
  assert.equal(created.statusCode, 201, created.body)
  const d = created.json()
  assert.deepEqual(d.filters.events, ['signed up'])
  const pro = aBrowserEvent(app.projectKey, { event: 'signed up', properties: { distinct_id: 'u1', plan: 'pro' } })
  const free = aBrowserEvent(app.projectKey, { event: 'signed up', properties: { distinct_id: 'u2', plan: 'free' } })
  const other = aBrowserEvent(app.projectKey, { event: '$pageview', properties: { distinct_id: 'u3', plan: 'pro' } })
  await capture(app, [pro, free, other])
  await waitForEvents(app, 3)
  const [got] = await eventually(async () => receiver.requests.length >= 1 && receiver.requests)
  assert.deepEqual(JSON.parse(got!.body), { id: pro.uuid, what: 'signed up by u1', plan: 'pro', project: 'Default project' })
  assert.equal(got!.headers['idempotency-key'], `destination:${d.id}:${pro.uuid}`)
  assert.equal(got!.headers['x-token'], 'secret')
  assert.equal(got!.headers['content-type'], 'application/json')
  const deliveries = await eventually(async () => {
    const rows = (await api.get(`/destinations/${d.id}/deliveries/`)).json().results
    return rows.length === 1 && rows[0].status === 'sent' && rows
  })
  assert.equal(deliveries[0].response_status, 200)
  // The same event again (an SDK retry): stored once, sent once.
  await capture(app, [pro])
  await new Promise((r) => setTimeout(r, 1500))
  assert.equal(receiver.requests.length, 1)
})

test('destinations: the default body, retries on 500 with the same key, and no retry on 400', async (t) => {
  const receiver = await startWebhookReceiver(t, (r, n) => (r.path === '/flaky' ? (n < 3 ? 500 : 200) : r.path === '/bad' ? 400 : 200))
  const app = await buildTestApp(t, { env: ALLOW_LOOPBACK })
  const api = privateApi(app)
  const flaky = (await api.post('/destinations/', { name: 'flaky', url: receiver.url('/flaky') })).json()
  const bad = (await api.post('/destinations/', { name: 'bad', url: receiver.url('/bad') })).json()
  const e = aBrowserEvent(app.projectKey, { event: 'bought', properties: { distinct_id: 'buyer', $set: { email: 'b@x.io' } } })
  await capture(app, [e])
  const flakyHits = await eventually(async () => {
    const hits = receiver.requests.filter((r) => r.path === '/flaky')
    return hits.length === 3 && hits
  })
  assert.deepEqual(new Set(flakyHits.map((h) => h.headers['idempotency-key'])), new Set([`destination:${flaky.id}:${e.uuid}`]))
  const body = JSON.parse(flakyHits[2]!.body)
  assert.equal(body.event.uuid, e.uuid)
  assert.equal(body.event.event, 'bought')
  assert.equal(body.event.distinct_id, 'buyer')
  assert.equal(body.person.properties.email, 'b@x.io')
  // The outcome is written a moment after the answer (outcomes are written together).
  const flakyRow = await eventually(async () => {
    const [row] = (await api.get(`/destinations/${flaky.id}/deliveries/`)).json().results
    return row?.status === 'sent' && row
  })
  assert.equal(flakyRow.attempts, 3)
  const badRow = await eventually(async () => {
    const [row] = (await api.get(`/destinations/${bad.id}/deliveries/`)).json().results
    return row?.status === 'failed' && row
  })
  assert.equal(badRow.response_status, 400)
  assert.equal(badRow.attempts, 1)
  assert.equal(receiver.requests.filter((r) => r.path === '/bad').length, 1)
  // A replay sends the dead-lettered message again.
  assert.deepEqual((await api.post(`/destinations/${bad.id}/replay/`)).json(), { replayed: 1 })
  await eventually(async () => receiver.requests.filter((r) => r.path === '/bad').length === 2)
})

test('destinations: a held endpoint holds only its own messages; each gets its concurrency over kept-alive connections', async (t) => {
  // The slow endpoint answers nothing until the fast one has every message.
  let release!: () => void
  const released = new Promise<number>((resolve) => (release = () => resolve(200)))
  const slow = await startWebhookReceiver(t, () => released)
  const fast = await startWebhookReceiver(t)
  const app = await buildTestApp(t, { env: { ...ALLOW_LOOPBACK, TALLY_WEBHOOK_CONCURRENCY: '2' } })
  const api = privateApi(app)
  for (const [name, r] of [['slow', slow], ['fast', fast]] as const) {
    assert.equal((await api.post('/destinations/', { name, url: r.url(), body_template: '{"uuid": {event.uuid}}' })).statusCode, 201)
  }
  const events = Array.from({ length: 30 }, (_, i) => aBrowserEvent(app.projectKey, { event: 'e', properties: { distinct_id: `u${i}` } }))
  await capture(app, events)
  await eventually(async () => fast.requests.length >= events.length, 600)
  assert.equal(slow.requests.length, 2, 'the held endpoint has its concurrency in flight, no more')
  release()
  await eventually(async () => slow.requests.length >= events.length, 600)
  for (const r of [slow, fast]) {
    assert.deepEqual(new Set(r.requests.map((q) => JSON.parse(q.body).uuid)), new Set(events.map((e) => e.uuid)))
    // Nothing failed, so nothing is sent twice: a message in hand (its outcome not yet written) is never claimed again.
    assert.equal(r.requests.length, events.length)
    assert.ok(r.maxInFlight() <= 2, `at most 2 requests in flight, saw ${r.maxInFlight()}`)
    assert.ok(r.connections() <= 2, `messages share kept-alive connections: ${r.connections()} opened for ${r.requests.length} requests`)
  }
})

test('destinations: internal addresses are refused unless allowed, after DNS and after redirects', async (t) => {
  const receiver = await startWebhookReceiver(t, (r) => (r.path === '/redirect' ? { status: 302, location: `http://127.0.0.2:${receiverPort()}/hook` } : 200))
  const receiverPort = () => receiver.port
  const app = await buildTestApp(t, { env: ALLOW_LOOPBACK })
  const api = privateApi(app)
  const tryUrl = async (url: string) => {
    const d = (await api.post('/destinations/', { name: url, url })).json()
    return (await api.post(`/destinations/${d.id}/test/`)).json()
  }
  for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.1.2.3/x', 'http://[::1]:1/x', 'http://[::ffff:127.0.0.2]:1/x', 'http://0.0.0.0:1/']) {
    const r = await tryUrl(url)
    assert.equal(r.success, false, url)
    assert.match(r.error, /internal/, url)
  }
  // A redirect from the allowed receiver to 127.0.0.2, which is not allowed, is checked again.
  const redirected = await tryUrl(receiver.url('/redirect'))
  assert.equal(redirected.success, false)
  assert.match(redirected.error, /127\.0\.0\.2.*internal|internal/)
  assert.equal(receiver.requests.filter((r) => r.path === '/hook').length, 0)
  // The allowed address itself works.
  assert.equal((await tryUrl(receiver.url('/ok'))).success, true)
})

test('destinations: without the allow-list a loopback endpoint is dead-lettered, never reached', async (t) => {
  const receiver = await startWebhookReceiver(t)
  const app = await buildTestApp(t)
  const api = privateApi(app)
  const d = (await api.post('/destinations/', { name: 'local', url: receiver.url() })).json()
  await capture(app, [aBrowserEvent(app.projectKey)])
  const row = await eventually(async () => {
    const [r] = (await api.get(`/destinations/${d.id}/deliveries/`)).json().results
    return r?.status === 'failed' && r
  })
  assert.match(row.error, /internal/)
  // A DNS name is judged by the addresses it resolves to.
  const named = (await api.post('/destinations/', { name: 'named', url: `http://localhost:${receiver.port}/hook` })).json()
  const sent = (await api.post(`/destinations/${named.id}/test/`)).json()
  assert.equal(sent.success, false)
  assert.match(sent.error, /^localhost: address .* is internal/)
  assert.equal(receiver.requests.length, 0)
})

test('destinations: validation, update, delete and project isolation', async (t) => {
  const app = await buildTestApp(t)
  const api = privateApi(app)
  const bad = async (body: object, attr: string) => {
    const res = await api.post('/destinations/', body)
    assert.equal(res.statusCode, 400, JSON.stringify(body))
    assert.equal(res.json().attr, attr)
  }
  await bad({ url: 'https://example.com/' }, 'name')
  await bad({ name: 'x' }, 'url')
  await bad({ name: 'x', url: 'ftp://example.com/' }, 'url')
  await bad({ name: 'x', url: 'not a url' }, 'url')
  await bad({ name: 'x', url: 'https://example.com/', body_template: '{"a": {event.uuid}' }, 'body_template')
  await bad({ name: 'x', url: 'https://example.com/', headers: { 'bad header': 'v' } }, 'headers')
  await bad({ name: 'x', url: 'https://example.com/', filters: { actions: ['abc'] } }, 'filters__actions__0')
  const d = (await api.post('/destinations/', { name: 'x', url: 'https://example.com/' })).json()
  assert.equal(d.body_template, null)
  assert.equal(d.enabled, true)
  const patched = await api.patch(`/destinations/${d.id}/`, { enabled: false, body_template: '{"e": {event}}' })
  assert.equal(patched.statusCode, 200)
  assert.equal(patched.json().enabled, false)
  assert.equal(patched.json().body_template, '{"e": {event}}')
  assert.equal((await api.patch(`/destinations/${d.id}/`, { body_template: null })).json().body_template, null)
  const stranger = await strangerWithProject(app)
  assert.equal((await privateApi(app, stranger.headers, stranger.projectId).get(`/destinations/${d.id}/`)).statusCode, 404)
  assert.equal((await privateApi(app, stranger.headers).get('/destinations/')).statusCode, 404)
  assert.equal((await api.get('/destinations/')).json().count, 1)
  assert.equal((await api.delete(`/destinations/${d.id}/`)).statusCode, 204)
  assert.equal((await api.get(`/destinations/${d.id}/`)).statusCode, 404)
  assert.equal((await api.get('/destinations/')).json().count, 0)
})
