import assert from 'node:assert/strict'
import { buildTestApp } from '../helpers/test-app.ts'
import { testOnEachEngine } from '../helpers/engines.ts'
import { privateApi } from '../helpers/private-api.ts'
import { captureEvents, postQuery, queryOk, type TestEvent } from '../helpers/query-data.ts'

// WebStatsTableQuery with a conversion goal (PostHog's stats_table.py `to_main_query` with
// `conversionGoal`) on both engines. The range is 3-5 June (UTC), its previous period 31 May-2 June;
// every answer below is counted by hand from these events.
const ev = (event: string, distinct_id: string, session: string, timestamp: string, path: string, properties: Record<string, unknown> = {}): TestEvent => ({
  event, distinct_id, timestamp, properties: { $session_id: session, $current_url: `https://shop.example.com${path}`, $pathname: path, $browser_language: 'en-US', ...properties },
})
const events: TestEvent[] = [
  // a enters on /home, buys twice on /pricing (a pro and a free plan).
  ev('$pageview', 'user-a', 's1', '2024-06-03T10:00:00Z', '/home'),
  ev('$pageview', 'user-a', 's1', '2024-06-03T10:01:00Z', '/pricing'),
  ev('purchase', 'user-a', 's1', '2024-06-03T10:02:00Z', '/pricing', { plan: 'pro' }),
  ev('purchase', 'user-a', 's1', '2024-06-03T10:03:00Z', '/pricing', { plan: 'free' }),
  // b buys on /home; c only looks at /pricing; d buys on /checkout without a page view.
  ev('$pageview', 'user-b', 's2', '2024-06-04T12:00:00Z', '/home'),
  ev('purchase', 'user-b', 's2', '2024-06-04T12:01:00Z', '/home', { plan: 'pro' }),
  ev('$pageview', 'user-c', 's3', '2024-06-05T08:00:00Z', '/pricing'),
  ev('purchase', 'user-d', 's4', '2024-06-05T20:00:00Z', '/checkout', { plan: 'pro' }),
  // Previous period: b buys on /home, e looks at /pricing.
  ev('$pageview', 'user-b', 'p1', '2024-06-01T10:00:00Z', '/home'),
  ev('purchase', 'user-b', 'p1', '2024-06-01T10:01:00Z', '/home', { plan: 'pro' }),
  ev('$pageview', 'user-e', 'p2', '2024-06-01T11:00:00Z', '/pricing'),
]
const table = (breakdownBy: string, conversionGoal: unknown, extra: Record<string, unknown> = {}) => ({
  kind: 'WebStatsTableQuery', breakdownBy, dateRange: { date_from: '2024-06-03', date_to: '2024-06-05' }, properties: [], conversionGoal, ...extra,
})
const GOAL_COLUMNS = [
  'context.columns.breakdown_value',
  'context.columns.visitors',
  'context.columns.total_conversions',
  'context.columns.unique_conversions',
  'context.columns.conversion_rate',
  'context.columns.ui_fill_fraction',
  'context.columns.cross_sell',
]

testOnEachEngine('stats table with a conversion goal: total and unique conversions and the conversion rate per row', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, events)
  const purchase = { customEventName: 'purchase' }

  // Pages: a goal event counts under its own page. /pricing: visitors a, c; purchases 2 (a's); unique a.
  // /home: a, b; 1 (b's); b. /checkout: d; 1; d. Ordered by unique conversions (1 each), then total
  // conversions, then visitors; the fill is each row's share of the unique conversions (3). With a
  // goal the table has no views and no bounce rate, even when asked for one.
  const pages = await queryOk(app, table('Page', purchase, { includeBounceRate: true }))
  assert.deepEqual(pages.columns, GOAL_COLUMNS)
  assert.deepEqual(pages.results, [
    ['/pricing', [2, null], [2, null], [1, null], [0.5, null], 1 / 3, ''],
    ['/home', [2, null], [1, null], [1, null], [0.5, null], 1 / 3, ''],
    ['/checkout', [1, null], [1, null], [1, null], [1, null], 1 / 3, ''],
  ])
  assert.deepEqual(pages.types.map((c: string[]) => c[1]), ['Nullable(String)', 'Tuple(UInt64, UInt64)', 'Tuple(UInt64, UInt64)', 'Tuple(UInt64, UInt64)', 'Tuple(Nullable(Float64), Nullable(Float64))', 'Float64', 'String'])

  // With compare, per period (sessions that started in it): /home had b's purchase before too; /pricing
  // had e, who did not buy (a rate of 0); /checkout had no visitor (no rate). Unique conversions (1, 1)
  // put /home first; then /pricing's 2 purchases before /checkout's 1.
  const compared = await queryOk(app, table('Page', purchase, { compareFilter: { compare: true } }))
  assert.deepEqual(compared.results.map((r: unknown[]) => r.slice(0, 5)), [
    ['/home', [2, 1], [1, 1], [1, 1], [0.5, 1]],
    ['/pricing', [2, 1], [2, 0], [1, 0], [0.5, 0]],
    ['/checkout', [1, 0], [1, 0], [1, 0], [1, null]],
  ])

  // Ordered by conversion rate, ascending: 0.5, 0.5 (tied: unique 1 and 1, then total 1 before 2), 1;
  // the fill is the rate itself.
  const byRate = await queryOk(app, table('Page', purchase, { orderBy: ['ConversionRate', 'ASC'] }))
  assert.deepEqual(byRate.results.map((r: unknown[]) => [r[0], r[5]]), [['/home', 0.5], ['/pricing', 0.5], ['/checkout', 1]])
  // Ordered by total conversions, descending; an order on views (not a column with a goal) falls back to PostHog's default.
  assert.deepEqual((await queryOk(app, table('Page', purchase, { orderBy: ['TotalConversions', 'DESC'] }))).results.map((r: unknown[]) => r[0]), ['/pricing', '/home', '/checkout'])
  assert.deepEqual((await queryOk(app, table('Page', purchase, { orderBy: ['Views', 'ASC'] }))).results.map((r: unknown[]) => r[0]), ['/checkout', '/home', '/pricing'])

  // Entry pages (a session breakdown): s1 and s2 entered on /home (visitors a, b; purchases 2 + 1;
  // both converted), s3 on /pricing (c, none), s4 on /checkout (d, 1).
  const entry = await queryOk(app, table('InitialPage', purchase, { includeBounceRate: true }))
  assert.deepEqual(entry.columns, GOAL_COLUMNS)
  assert.deepEqual(entry.results, [
    ['/home', [2, null], [3, null], [2, null], [1, null], 2 / 3, ''],
    ['/checkout', [1, null], [1, null], [1, null], [1, null], 1 / 3, ''],
    ['/pricing', [1, null], [0, null], [0, null], [0, null], 0, ''],
  ])

  // Languages: one row of every column (PostHog would cut it to three): visitors a, b, c, d; purchases
  // 4; converters a, b, d.
  const languages = await queryOk(app, table('Language', purchase))
  assert.deepEqual(languages.results, [['en-US', [4, null], [4, null], [3, null], [0.75, null], 1, '']])

  // An action (pro purchases only): a's free purchase is no conversion, so /pricing has 1; all tied
  // on conversions, the rows go by visitors, then by value.
  const action = (await privateApi(app).post('/actions/', { name: 'Pro purchase', steps: [{ event: 'purchase', properties: [{ key: 'plan', value: 'pro', type: 'event' }] }] })).json()
  const byAction = await queryOk(app, table('Page', { actionId: action.id }))
  assert.deepEqual(byAction.results.map((r: unknown[]) => r.slice(0, 5)), [
    ['/home', [2, null], [1, null], [1, null], [0.5, null]],
    ['/pricing', [2, null], [1, null], [1, null], [0.5, null]],
    ['/checkout', [1, null], [1, null], [1, null], [1, null]],
  ])

  // Without a goal the table is unchanged: views, then the fill of visitors.
  const plain = await queryOk(app, table('Page', null))
  assert.deepEqual(plain.columns.slice(0, 3), ['context.columns.breakdown_value', 'context.columns.visitors', 'context.columns.views'])
  assert.deepEqual(plain.results.map((r: unknown[]) => r.slice(0, 3)), [['/home', [2, null], [2, null]], ['/pricing', [2, null], [2, null]]])

  // An unknown action is a 400 naming the field.
  const bad = await postQuery(app, table('Page', { actionId: 999999 }))
  assert.equal(bad.statusCode, 400, bad.body)
  assert.equal(bad.json().attr, 'query.conversionGoal.actionId')
})
