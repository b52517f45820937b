import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { testOnEachEngine } from '../helpers/engines.ts'
import { readAllEvents, waitForEvents } from '../helpers/capture-helpers.ts'
import { privateApi } from '../helpers/private-api.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'

// Bounded work per capture request: events per request, property keys ($set/$set_once included) and
// elements per event. Past a limit the whole request is a 413 in PostHog's error shape naming the
// limit (PostHog's EventTooBig), and nothing of it is stored.

const wideProperties = (n: number, prefix = 'k') => {
  const properties: Record<string, number> = {}
  for (let i = 0; i < n; i++) properties[`${prefix}${i}`] = i
  return properties
}

const batch = (app: TestApp, events: unknown[]) =>
  app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch: events } })

function assert413(res: { statusCode: number; body: string }, env: string): void {
  assert.equal(res.statusCode, 413, res.body.slice(0, 300))
  const body = JSON.parse(res.body)
  assert.equal(body.type, 'client_error')
  assert.equal(body.code, 'request_too_large')
  assert.match(body.detail, new RegExp(env))
}

async function listen(app: TestApp): Promise<string> {
  await app.http.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.http.server.address() as AddressInfo).port}`
}

const decideBody = (app: TestApp) => JSON.stringify({ api_key: app.projectKey, distinct_id: 'someone' })

testOnEachEngine('one event of 100,000 property keys is a 413 naming the limit; /_health and /decide are answered meanwhile; nothing is stored', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const base = await listen(app)
  const body = JSON.stringify({ api_key: app.projectKey, batch: [{ event: 'wide', distinct_id: 'attacker', properties: wideProperties(100_000) }] })
  assert.ok(body.length > 1_000_000 && body.length < app.config.http.maxBodyBytes, 'within the body limit')
  const order: string[] = []
  const capture = fetch(`${base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => {
    order.push('capture')
    return { statusCode: r.status, body: await r.text() }
  })
  const health = fetch(`${base}/_health`).then((r) => { order.push('health'); return r.status })
  const decide = fetch(`${base}/decide/?v=3`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: decideBody(app) })
    .then(async (r) => { order.push('decide'); return { status: r.status, json: await r.json() } })
  assert413(await capture, 'TALLY_CAPTURE_MAX_EVENT_KEYS')
  assert.equal(await health, 200)
  const d = await decide
  assert.equal(d.status, 200)
  assert.deepEqual(d.json.featureFlags, {})
  assert.equal(order.length, 3)

  // Nothing of the request was stored: a later event is the only one.
  assert.equal((await batch(app, [{ event: 'after', distinct_id: 'u', properties: {} }])).statusCode, 200)
  const events = await waitForEvents(app, 1)
  assert.deepEqual(events.map((e) => e.event), ['after'])
}, { timeout: 120_000 })

testOnEachEngine('the key count comes before the walk of every string: an event over the key limit that is also nested too deep is the 413, not the depth 400', async (t, engine) => {
  // Issue 29: the text-cleaning walk of every key and value cost more than the parse (168 ms of CPU
  // for 100,000 keys, ~65 ms of it the parse). The walk is also where the depth limit is found, so
  // which answer a body over both limits gets shows which check ran first.
  const app = await buildTestApp(t, { engine })
  let deep: unknown = 'bottom'
  for (let i = 0; i < 200; i++) deep = { d: deep }
  const over = { event: 'wide', distinct_id: 'attacker', properties: { ...wideProperties(1_500), deep } }
  assert413(await batch(app, [over]), 'TALLY_CAPTURE_MAX_EVENT_KEYS')
  // Within the key limit, the same depth is still refused by the walk, with PostHog's 400.
  const res = await batch(app, [{ ...over, properties: { deep } }])
  assert.equal(res.statusCode, 400, res.body)
  assert.match(JSON.parse(res.body).detail, /nested deeper than 128/)
})

testOnEachEngine('$set and $set_once keys count with the properties; elements per event; events per request', async (t, engine) => {
  const app = await buildTestApp(t, { engine, env: { TALLY_CAPTURE_MAX_EVENT_KEYS: '10', TALLY_CAPTURE_MAX_EVENT_ELEMENTS: '3', TALLY_CAPTURE_MAX_EVENTS: '4' } })
  const ev = (extra: Record<string, unknown>) => ({ event: 'e', distinct_id: 'u', ...extra })
  assert413(await batch(app, [ev({ properties: wideProperties(11) })]), 'TALLY_CAPTURE_MAX_EVENT_KEYS')
  assert413(await batch(app, [ev({ properties: { a: 1, $set: wideProperties(10) } })]), 'TALLY_CAPTURE_MAX_EVENT_KEYS')
  assert413(await batch(app, [ev({ properties: { a: 1 }, $set_once: wideProperties(5), $set: wideProperties(5, 's') })]), 'TALLY_CAPTURE_MAX_EVENT_KEYS')
  const element = { tag_name: 'div', attr__class: 'c' }
  assert413(await batch(app, [ev({ properties: { $elements: [element, element, element, element] } })]), 'TALLY_CAPTURE_MAX_EVENT_ELEMENTS')
  assert413(await batch(app, [ev({ properties: { $elements_chain: 'a:nth-child="1";div;span;body' } })]), 'TALLY_CAPTURE_MAX_EVENT_ELEMENTS')
  assert413(await batch(app, Array.from({ length: 5 }, () => ev({ properties: {} }))), 'TALLY_CAPTURE_MAX_EVENTS')
  // A single event on /e/ and an array body count alike.
  const single = await app.http.inject({ method: 'POST', url: '/e/', payload: { api_key: app.projectKey, ...ev({ properties: wideProperties(11) }) } })
  assert413(single, 'TALLY_CAPTURE_MAX_EVENT_KEYS')

  // At the limits: accepted and stored whole.
  const atLimit = [
    ev({ event: 'keys', properties: { ...wideProperties(5), $set: wideProperties(5, 's') } }),
    ev({ event: 'elements', properties: { $elements: [element, element, element] } }),
    ev({ event: 'chain', properties: { $elements_chain: 'a;div;span' } }),
    ev({ event: 'plain', properties: {} }),
  ]
  assert.equal((await batch(app, atLimit)).statusCode, 200)
  const stored = await waitForEvents(app, 4)
  assert.deepEqual(stored.map((e) => e.event).sort(), ['chain', 'elements', 'keys', 'plain'])
  assert.equal(Object.keys(stored.find((e) => e.event === 'keys')!.properties).filter((k) => /^k\d$/.test(k)).length, 5)
  assert.equal((await readAllEvents(app)).length, 4, 'nothing of the refused requests was stored')
})

testOnEachEngine('an event past the definitions threshold (limit raised) is stored; its definitions are skipped and counted', async (t, engine) => {
  const app = await buildTestApp(t, { engine, env: { TALLY_CAPTURE_MAX_EVENT_KEYS: '200000' } })
  const base = await listen(app)
  const res = await fetch(`${base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: app.projectKey, batch: [{ event: 'very wide', distinct_id: 'u', properties: wideProperties(20_000, 'vw') }] }) })
  assert.equal(res.status, 200)
  // While the worker takes it: health and flags answer.
  const answers = await Promise.all([fetch(`${base}/_health`).then((r) => r.status), fetch(`${base}/decide/?v=3`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: decideBody(app) }).then((r) => r.status)])
  assert.deepEqual(answers, [200, 200])
  const [stored] = await waitForEvents(app, 1)
  assert.equal(Object.keys(stored!.properties).filter((k) => k.startsWith('vw')).length, 20_000)
  const metrics = await (await fetch(`${base}/_metrics`)).text()
  assert.match(metrics, /tally_ingestion_events_total\{outcome="limited",reason="definitions_skipped"\} 1/)
  const api = privateApi(app)
  const props = (await api.get('/property_definitions/?search=vw')).json()
  assert.equal(props.count, 0, 'no definition of its 20,000 keys')
  const names = (await api.get('/event_definitions/?search=very')).json().results.map((e: { name: string }) => e.name)
  assert.deepEqual(names, ['very wide'])
}, { timeout: 120_000 })
