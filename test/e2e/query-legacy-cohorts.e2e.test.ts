import assert from 'node:assert/strict'
import { privateApi } from '../helpers/private-api.ts'
import { queryOk, seededApps, type TestEvent } from '../helpers/query-data.ts'
import { testOnEachEngine } from '../helpers/engines.ts'
import type { TestApp } from '../helpers/test-app.ts'

// Cohorts created in PostHog's legacy `groups` form filter queries as PostHog's Cohort.properties
// converts them: an OR of the groups; property lists (event type read as person), `{key: value}`
// objects (exact person properties), and `event_id`/`action_id` with `days` (performed the event).
const view = (who: string, day: string, set?: Record<string, unknown>): TestEvent => ({ event: '$pageview', distinct_id: who, timestamp: `2024-06-${day}T10:00:00Z`, properties: set ? { $set: set } : {} })
const events: TestEvent[] = [
  view('pro1', '03', { plan: 'pro' }), view('pro1', '04'), view('pro2', '04', { plan: 'pro' }),
  view('free1', '03', { plan: 'free' }), view('free1', '05'),
  view('none1', '05'),
  { event: 'purchase', distinct_id: 'none1', timestamp: '2024-06-05T11:00:00Z' },
]
const dateRange = { date_from: '2024-06-03', date_to: '2024-06-05' }

const seeded = seededApps(events)

async function legacyCohort(app: TestApp, groups: unknown[]): Promise<number> {
  const res = await privateApi(app).post('/cohorts/', { name: `legacy ${JSON.stringify(groups)}`, groups })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

async function viewsIn(app: TestApp, cohort: number): Promise<number[]> {
  const body = await queryOk(app, { kind: 'TrendsQuery', dateRange, interval: 'day', series: [{ kind: 'EventsNode', event: '$pageview' }], properties: [{ key: 'id', value: cohort, type: 'cohort' }] })
  return body.results[0].data
}

testOnEachEngine('a legacy property-list group matches persons by their properties (a property without type is a person property)', async (_t, engine) => {
  const app = seeded.app(engine)
  assert.deepEqual(await viewsIn(app, await legacyCohort(app, [{ properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] }])), [1, 2, 0])
  assert.deepEqual(await viewsIn(app, await legacyCohort(app, [{ properties: [{ key: 'plan', value: 'free' }] }])), [1, 0, 1])
})

testOnEachEngine('a legacy {key: value} group and several groups OR-ed', async (_t, engine) => {
  const app = seeded.app(engine)
  assert.deepEqual(await viewsIn(app, await legacyCohort(app, [{ properties: { plan: 'free' } }])), [1, 0, 1])
  assert.deepEqual(await viewsIn(app, await legacyCohort(app, [{ properties: { plan: 'free' } }, { properties: [{ key: 'plan', value: 'pro', type: 'person' }] }])), [2, 2, 1])
})

testOnEachEngine('a legacy event group: persons who did the event in the last `days` days', async (_t, engine) => {
  const app = seeded.app(engine)
  assert.deepEqual(await viewsIn(app, await legacyCohort(app, [{ event_id: 'purchase', days: 10000 }])), [0, 0, 1])
  // A group the converter cannot read matches nobody, as in PostHog.
  assert.deepEqual(await viewsIn(app, await legacyCohort(app, [{ properties: { plan: 'pro' } }, { nonsense: true }])), [0, 0, 0])
})
