import assert from 'node:assert/strict'
import { buildTestApp } from '../helpers/test-app.ts'
import { testOnEachEngine } from '../helpers/engines.ts'
import { privateApi } from '../helpers/private-api.ts'
import { captureEvents, postQuery, queryOk, type TestEvent } from '../helpers/query-data.ts'

// WebOverviewQuery's conversion-goal variant (PostHog's web_overview.py with `conversionGoal`) on both
// engines. The range is 3-5 June (UTC), its previous period 31 May-2 June; the answers are counted by
// hand from the events below.
const ev = (event: string, distinct_id: string, session: string | null, timestamp: string, properties: Record<string, unknown> = {}): TestEvent => ({
  event, distinct_id, timestamp, properties: { ...(session ? { $session_id: session } : {}), $current_url: 'https://shop.example.com/', ...properties },
})
const events: TestEvent[] = [
  // Current period: user-a converts twice in one session (a pro and a free purchase) and once in another.
  ev('$pageview', 'user-a', 'c1', '2024-06-03T10:00:00Z'),
  ev('purchase', 'user-a', 'c1', '2024-06-03T10:05:00Z', { plan: 'pro' }),
  ev('purchase', 'user-a', 'c1', '2024-06-03T10:06:00Z', { plan: 'free' }),
  ev('$pageview', 'user-a', 'c2', '2024-06-04T09:00:00Z'),
  ev('purchase', 'user-a', 'c2', '2024-06-04T09:01:00Z', { plan: 'pro' }),
  ev('$pageview', 'user-b', 'c3', '2024-06-04T12:00:00Z'),
  ev('$pageview', 'user-c', 'c4', '2024-06-05T08:00:00Z'),
  ev('signup', 'user-c', 'c4', '2024-06-05T08:01:00Z'),
  // A session with the goal and no page view: its visitor counts (the goal's events are read too).
  ev('purchase', 'user-d', 'c5', '2024-06-05T20:00:00Z', { plan: 'pro' }),
  // No session id: not counted.
  ev('purchase', 'user-e', null, '2024-06-04T10:00:00Z', { plan: 'pro' }),
  // Previous period: user-b converts; user-f only looks; user-g's session starts on 2 June and converts on 3 June.
  ev('$pageview', 'user-b', 'p1', '2024-06-01T10:00:00Z'),
  ev('purchase', 'user-b', 'p1', '2024-06-01T10:02:00Z', { plan: 'pro' }),
  ev('$pageview', 'user-f', 'p2', '2024-06-01T11:00:00Z'),
  ev('$pageview', 'user-g', 'p3', '2024-06-02T23:50:00Z'),
  ev('purchase', 'user-g', 'p3', '2024-06-03T00:10:00Z', { plan: 'pro' }),
]
const overview = (conversionGoal: unknown, extra: Record<string, unknown> = {}) => ({ kind: 'WebOverviewQuery', dateRange: { date_from: '2024-06-03', date_to: '2024-06-05' }, properties: [], conversionGoal, ...extra })
const tiles = (results: Array<Record<string, unknown>>) => results.map((r) => [r.key, r.kind, r.value, r.previous, r.changeFromPreviousPct, r.isIncreaseBad])

testOnEachEngine('overview with a conversion goal: visitors, total and unique conversions, conversion rate', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, events)

  // A custom event: 4 visitors (a, b, c, d), 4 purchases (2 + 1 + 1), 2 converting visitors (a, d).
  const custom = await queryOk(app, overview({ customEventName: 'purchase' }))
  assert.deepEqual(tiles(custom.results), [
    ['visitors', 'unit', 4, null, null, null],
    ['total conversions', 'unit', 4, null, null, null],
    ['unique conversions', 'unit', 2, null, null, null],
    ['conversion rate', 'percentage', 50, null, null, null],
  ])
  assert.equal(custom.dateFrom, '2024-06-03 00:00:00')

  // With compare: the previous period has b, f and g (whose session started on 2 June), 2 purchases by b and g.
  const compared = await queryOk(app, overview({ customEventName: 'purchase' }, { compareFilter: { compare: true } }))
  assert.deepEqual(tiles(compared.results).map((r) => r.slice(0, 5)), [
    ['visitors', 'unit', 4, 3, 33],
    ['total conversions', 'unit', 4, 2, 100],
    ['unique conversions', 'unit', 2, 2, 0],
    ['conversion rate', 'percentage', 50, (2 / 3) * 100, -25],
  ])

  // An action (pro purchases only): the free purchase is no conversion.
  const action = (await privateApi(app).post('/actions/', { name: 'Pro purchase', steps: [{ event: 'purchase', properties: [{ key: 'plan', value: 'pro', type: 'event' }] }] })).json()
  const byAction = await queryOk(app, overview({ actionId: action.id }))
  assert.deepEqual(tiles(byAction.results).map((r) => r.slice(0, 3)), [
    ['visitors', 'unit', 4],
    ['total conversions', 'unit', 3],
    ['unique conversions', 'unit', 2],
    ['conversion rate', 'percentage', 50],
  ])

  // A goal nobody reached: no conversions, a rate of 0 (and user-d, with no page view, is no visitor);
  // an empty range: no visitors, no rate.
  const none = await queryOk(app, overview({ customEventName: 'refund' }))
  assert.deepEqual(tiles(none.results).map((r) => r[2]), [3, 0, 0, 0])
  const empty = await queryOk(app, overview({ customEventName: 'purchase' }, { dateRange: { date_from: '2024-07-01', date_to: '2024-07-02' } }))
  assert.deepEqual(tiles(empty.results).map((r) => r[2]), [0, 0, 0, null])

  // Without a goal the overview is the usual five tiles.
  assert.deepEqual((await queryOk(app, overview(null))).results.map((r: { key: string }) => r.key), ['visitors', 'views', 'sessions', 'session duration', 'bounce rate'])

  // Bad goals are 400s naming the field.
  for (const [goal, attr] of [[{ actionId: 999999 }, 'query.conversionGoal.actionId'], [{}, 'query.conversionGoal'], [{ customEventName: 5 }, 'query.conversionGoal.customEventName']] as const) {
    const res = await postQuery(app, overview(goal))
    assert.equal(res.statusCode, 400, res.body)
    assert.equal(res.json().attr, attr)
  }
})
