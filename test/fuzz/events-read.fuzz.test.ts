import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import fc from 'fast-check'
import { buildTestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { EVENT_SQL_OPERATORS } from '../../src/domain/properties/property-operators.ts'
import {
  assertHealthy, assertNo5xx, describe, fuzzSettings, hostileObject, hostileQueryValue, hostileString, hostileValue, pct,
} from './hostile.ts'

// Hostile events go in through capture; then every read path (the events list with each filter
// kind, and the event by uuid) is queried with generated parameters: never a 5xx.

const OPERATORS = EVENT_SQL_OPERATORS

test('events API: every filter kind over hostile stored events never 5xx', async (t) => {
  const app = await buildTestApp(t)
  const settings = fuzzSettings('events-read', 150)
  // Stored first: events whose names, distinct ids, keys and values are the hostile corpus.
  const hostileEvents = fc.sample(
    fc.record({ event: hostileString, distinct_id: hostileString, properties: hostileObject, uuid: fc.constant(null) }),
    { seed: settings.seed, numRuns: 40 },
  ).map((e) => ({ ...e, uuid: randomUUID(), event: e.event === '' ? 'x' : e.event, distinct_id: e.distinct_id === '' ? 'x' : e.distinct_id }))
  const fixed = [
    { uuid: randomUUID(), event: 'poison\ud800', distinct_id: 'd\u0000', properties: { p: 'x\udc00y', 'k\ud800': 'v', n: 'a\u0000b', __proto__: 'p', constructor: 1, big: 1e308, nested: { a: [1, { b: '\udfff' }] } } },
  ]
  const batch = [...hostileEvents, ...fixed]
  const res = await app.http.inject({ method: 'POST', url: '/batch/', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ api_key: app.projectKey, batch }) })
  assert.equal(res.statusCode, 200, res.body)
  await waitForEvents(app, batch.length)

  const dateValue = fc.oneof(fc.date({ noInvalidDate: true, min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z') }).map((d) => pct(d.toISOString())), fc.constantFrom('2024-01-01', '2030-01-01T00:00:00.123456%2B05:30'))
  const filter = fc.record(
    {
      key: fc.oneof({ weight: 5, arbitrary: fc.constantFrom('p', 'n', 'big', 'nested', '__proto__', 'k\uFFFD') }, { weight: 1, arbitrary: hostileString }),
      value: fc.oneof(
        { weight: 10, arbitrary: fc.constantFrom('x', '^x', '.*', 'a\uFFFDb', 1, '1e3', [1, 'a'], true) },
        { weight: 1, arbitrary: hostileValue },
        { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 3 }) },
      ),
      operator: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...OPERATORS) }, { weight: 1, arbitrary: hostileValue }),
      type: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('event', 'person', 'x') }),
    },
    { requiredKeys: ['key'] },
  )
  // Each parameter: mostly absent or well-formed (so queries reach the store), sometimes hostile.
  const param = (valid: fc.Arbitrary<string>) =>
    fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: valid }, { weight: 1, arbitrary: hostileQueryValue })
  const query = fc.record({
    event: param(fc.constantFrom(...batch.slice(0, 5).map((e) => pct(e.event)))),
    distinct_id: param(fc.constantFrom(...batch.slice(0, 5).map((e) => pct(e.distinct_id)))),
    after: param(dateValue),
    before: param(dateValue),
    before_uuid: param(fc.constant(randomUUID())),
    limit: param(fc.integer({ min: 0, max: 2000 }).map(String)),
    offset: param(fc.oneof(fc.integer({ min: 0, max: 100 }).map(String), fc.constant('1e20'))),
    properties: fc.oneof(
      { weight: 6, arbitrary: fc.array(filter, { minLength: 0, maxLength: 3 }).map((f) => pct(JSON.stringify(f))) },
      { weight: 1, arbitrary: hostileQueryValue },
    ),
  })
  const stats = new Map<string, number>()
  const ids = [...batch.map((e) => e.uuid), 'not-a-uuid']
  await fc.assert(
    fc.asyncProperty(query, fc.constantFrom(...ids), hostileQueryValue, async (q, uuid, rawId) => {
      const search = Object.entries(q).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`).join('&')
      const list = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/?${search}`, headers: app.auth })
      assertNo5xx(`events ?${describe(search)}`, list)
      const key = `${list.statusCode}${list.statusCode === 400 ? ` ${list.json().attr}` : ''}`
      stats.set(key, (stats.get(key) ?? 0) + 1)
      await assertHealthy(app)
      for (const id of [uuid, rawId]) {
        assertNo5xx(`event ${id}`, await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/${id}/`, headers: app.auth }))
      }
    }),
    settings,
  )
  // Every stored hostile event is readable by uuid.
  for (const e of batch) {
    const one = await app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/events/${e.uuid}/`, headers: app.auth })
    assert.equal(one.statusCode, 200, `${e.uuid}: ${one.body}`)
  }
  await assertHealthy(app)
  console.log(`# list answers: ${[...stats].sort().map(([k, n]) => `${k}: ${n}`).join(', ')}`)
  assert.ok((stats.get('200') ?? 0) > 0, 'some generated queries reached the store')
})
