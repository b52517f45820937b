import assert from 'node:assert/strict'
import { after, before, test, type TestContext } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { ENGINES, testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { skipWithoutClickHouse } from '../helpers/clickhouse.ts'
import { privateApi } from '../helpers/private-api.ts'
import { captureEvents, postQuery, queryOk, seededRandom, type TestEvent } from '../helpers/query-data.ts'

// A seeded data set over 2024-05-29..2024-06-07 (UTC, the project's zone). Every expectation below
// is computed from these events in plain JavaScript, not by Tally's SQL.
const rand = seededRandom(42)
const DAYS = Array.from({ length: 10 }, (_, i) => `2024-${i < 3 ? '05' : '06'}-${String(i < 3 ? 29 + i : i - 2).padStart(2, '0')}`)
const BROWSERS = Array.from({ length: 12 }, (_, i) => `browser-${String(i).padStart(2, '0')}`)
const events: TestEvent[] = []
const at = (day: string, seconds: number) => new Date(Date.parse(`${day}T00:00:00Z`) + seconds * 1000).toISOString()
for (const [d, day] of DAYS.entries()) {
  for (let p = 0; p < 30; p++) {
    if (rand() < 0.35) continue
    const anonymous = p < 8 && d < 5
    const distinctId = anonymous ? `anon-${p}` : `user-${p}`
    const views = 1 + Math.floor(rand() * 4)
    for (let v = 0; v < views; v++) {
      // Skewed browsers: low indexes are common, so the top values are clear and the rest is "other".
      const browser = BROWSERS[Math.min(BROWSERS.length - 1, Math.floor(rand() * rand() * BROWSERS.length))]!
      const properties: Record<string, unknown> = { $browser: browser }
      if (!anonymous) properties.$set = { plan: p % 3 === 0 ? 'pro' : 'free' }
      events.push({ event: '$pageview', distinct_id: distinctId, timestamp: at(day, p * 60 + v), properties })
    }
    // Before identifying, some of them also browse under their own id: two persons until the merge.
    if (anonymous && p % 2 === 0) events.push({ event: '$pageview', distinct_id: `user-${p}`, timestamp: at(day, p * 60 + 30), properties: { $browser: 'browser-00', $set: { plan: p % 3 === 0 ? 'pro' : 'free' } } })
    if (rand() < 0.4) events.push({ event: 'purchase', distinct_id: distinctId, timestamp: at(day, 40_000 + p), properties: { amount: 1 + Math.floor(rand() * 100) } })
  }
}
// user-0..7 identify on the sixth day: their anonymous events become theirs (persons merged).
for (let p = 0; p < 8; p++) events.push({ event: '$identify', distinct_id: `user-${p}`, timestamp: at(DAYS[5]!, 80_000 + p), properties: { $anon_distinct_id: `anon-${p}` } })

const personOf = (distinctId: string) => distinctId.replace(/^anon-/, 'user-')
const dayOf = (e: TestEvent) => e.timestamp.slice(0, 10)
const inDays = (e: TestEvent, days: string[]) => days.includes(dayOf(e))
const RANGE = DAYS.slice(3) // 2024-06-01..2024-06-07
const PREVIOUS = DAYS.slice(0, 3)
const dateRange = { date_from: RANGE[0], date_to: RANGE[RANGE.length - 1] }
const pageviews = events.filter((e) => e.event === '$pageview')
const purchases = events.filter((e) => e.event === 'purchase')
const perDay = (list: TestEvent[], days: string[], value: (es: TestEvent[]) => number) => days.map((d) => value(list.filter((e) => dayOf(e) === d)))
const uniquePersons = (es: TestEvent[]) => new Set(es.map((e) => personOf(e.distinct_id))).size
const trends = (extra: Record<string, unknown>) => ({ kind: 'TrendsQuery', dateRange, series: [{ kind: 'EventsNode', event: '$pageview' }], ...extra })

// One app and data set per engine for the whole file (loading it is the slow part); closed after the
// last test. Each test body runs on both (testOnEachEngine) and reads `app` of its engine.
let app: TestApp
const apps = {} as Record<Engine, TestApp>
const cleanups: Array<() => Promise<void>> = []
before(async () => {
  for (const engine of ENGINES) {
    if (engine === 'clickhouse' && skipWithoutClickHouse()) continue
    apps[engine] = await buildTestApp({ after: (fn: () => Promise<void>) => cleanups.push(fn) } as unknown as TestContext, { engine, env: { TALLY_LOG_LEVEL: process.env.QUERY_TEST_LOG ?? 'silent' } })
    await captureEvents(apps[engine], events)
  }
})
after(async () => {
  for (const fn of cleanups) await fn()
})

testOnEachEngine('total counts per day, with PostHog\'s result keys and empty days as 0', async (_t, engine) => {
  app = apps[engine]
  const body = await queryOk(app, trends({}))
  assert.equal(body.results.length, 1)
  const [s] = body.results
  for (const key of ['data', 'labels', 'days', 'count', 'label', 'action', 'filter']) assert.ok(key in s, `result has ${key}`)
  assert.deepEqual(s.days, RANGE)
  assert.equal(s.labels[0], '1-Jun-2024')
  assert.deepEqual(s.data, perDay(pageviews, RANGE, (es) => es.length))
  assert.equal(s.count, s.data.reduce((a: number, b: number) => a + b, 0))
  assert.equal(s.label, '$pageview')
  assert.equal(s.action.math, 'total')
  for (const key of ['is_cached', 'last_refresh', 'timezone', 'cache_key']) assert.ok(key in body, `envelope has ${key}`)
})

testOnEachEngine('dau counts a person merged by $identify once a day; weekly_active counts the 7 days up to each day', async (_t, engine) => {
  app = apps[engine]
  const body = await queryOk(app, trends({ series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }, { kind: 'EventsNode', event: '$pageview', math: 'weekly_active' }] }))
  const [dau, wau] = body.results
  assert.deepEqual(dau.data, perDay(pageviews, RANGE, uniquePersons))
  // The merge matters: counting distinct ids instead would differ on the days anonymous ids were active.
  assert.notDeepEqual(dau.data, perDay(pageviews, RANGE, (es) => new Set(es.map((e) => e.distinct_id)).size))
  const expectedWau = RANGE.map((d) => {
    const window = DAYS.filter((x) => x <= d && Date.parse(d) - Date.parse(x) < 7 * 86_400_000)
    return uniquePersons(pageviews.filter((e) => inDays(e, window)))
  })
  assert.deepEqual(wau.data, expectedWau)

  // Hourly weekly-active spans 24 + 167 hours: past one 64-bit word per person, the running-sum plan answers.
  const hourly = await queryOk(app, trends({ interval: 'hour', dateRange: { date_from: '2024-06-05', date_to: '2024-06-05' }, series: [{ kind: 'EventsNode', event: '$pageview', math: 'weekly_active' }] }))
  const expectedHourly = hourly.results[0].days.map((d: string) => {
    const end = Date.parse(`${d.replace(' ', 'T')}Z`) + 3_600_000
    return uniquePersons(pageviews.filter((e) => Date.parse(e.timestamp) < end && Date.parse(e.timestamp) >= end - 168 * 3_600_000))
  })
  assert.equal(hourly.results[0].data.length, 24)
  assert.deepEqual(hourly.results[0].data, expectedHourly)
})

testOnEachEngine('property math: sum, avg, max and median of a property', async (_t, engine) => {
  app = apps[engine]
  const series = ['sum', 'avg', 'max', 'median'].map((math) => ({ kind: 'EventsNode', event: 'purchase', math, math_property: 'amount' }))
  const body = await queryOk(app, trends({ series }))
  const amounts = (es: TestEvent[]) => es.map((e) => Number(e.properties!.amount)).sort((a, b) => a - b)
  const median = (xs: number[]) => (xs.length === 0 ? 0 : xs.length % 2 ? xs[(xs.length - 1) / 2]! : (xs[xs.length / 2 - 1]! + xs[xs.length / 2]!) / 2)
  const expected = [
    perDay(purchases, RANGE, (es) => amounts(es).reduce((a, b) => a + b, 0)),
    perDay(purchases, RANGE, (es) => (es.length ? amounts(es).reduce((a, b) => a + b, 0) / es.length : 0)),
    perDay(purchases, RANGE, (es) => (es.length ? Math.max(...amounts(es)) : 0)),
    perDay(purchases, RANGE, (es) => median(amounts(es))),
  ]
  body.results.forEach((r: { data: number[] }, i: number) => r.data.forEach((v, j) => assert.ok(Math.abs(v - expected[i]![j]!) < 1e-9, `series ${i} day ${j}: ${v} vs ${expected[i]![j]}`)))
})

testOnEachEngine('breakdown by an event property: the top values by total, the rest as PostHog\'s "other"', async (_t, engine) => {
  app = apps[engine]
  const body = await queryOk(app, trends({ breakdownFilter: { breakdown: '$browser', breakdown_type: 'event', breakdown_limit: 4 } }))
  const inRange = pageviews.filter((e) => inDays(e, RANGE))
  const totals = [...new Set(inRange.map((e) => String(e.properties!.$browser)))]
    .map((b) => [b, inRange.filter((e) => e.properties!.$browser === b).length] as const)
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
  const top = totals.slice(0, 4).map(([b]) => b)
  assert.ok(totals.length > 4, 'the data set has more values than the limit')
  assert.deepEqual(body.results.map((r: { breakdown_value: string }) => r.breakdown_value), [...top, '$$_posthog_breakdown_other_$$'])
  for (const r of body.results) {
    const mine = (e: TestEvent) => (top.includes(r.breakdown_value) ? e.properties!.$browser === r.breakdown_value : !top.includes(String(e.properties!.$browser)))
    assert.deepEqual(r.data, perDay(inRange.filter(mine), RANGE, (es) => es.length), r.breakdown_value)
    assert.equal(r.label, r.breakdown_value, 'one series: labelled by the value alone, as PostHog')
  }
})

testOnEachEngine('breakdown by a person property, and filters by person property, by dynamic cohort and on the series', async (_t, engine) => {
  app = apps[engine]
  const body = await queryOk(app, trends({ breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } }))
  const planOf = (e: TestEvent) => ((e.properties!.$set as { plan?: string } | undefined)?.plan ?? '$$_posthog_breakdown_null_$$')
  for (const r of body.results) assert.deepEqual(r.data, perDay(pageviews.filter((e) => planOf(e) === r.breakdown_value), RANGE, (es) => es.length), r.breakdown_value)
  assert.deepEqual(new Set(body.results.map((r: { breakdown_value: string }) => r.breakdown_value)), new Set(['pro', 'free', '$$_posthog_breakdown_null_$$']))

  const expectedPro = perDay(pageviews.filter((e) => planOf(e) === 'pro'), RANGE, (es) => es.length)
  const filtered = await queryOk(app, trends({ properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] }))
  assert.deepEqual(filtered.results[0].data, expectedPro)
  const cohort = await privateApi(app).post('/cohorts/', { name: 'Pro', filters: { properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] } } })
  assert.equal(cohort.statusCode, 201, cohort.body)
  const byCohort = await queryOk(app, trends({ properties: [{ key: 'id', value: cohort.json().id, type: 'cohort' }] }))
  assert.deepEqual(byCohort.results[0].data, expectedPro)
  const onSeries = await queryOk(app, trends({ series: [{ kind: 'EventsNode', event: '$pageview', properties: [{ key: '$browser', value: ['browser-00', 'browser-01'], operator: 'exact' }] }] }))
  assert.deepEqual(onSeries.results[0].data, perDay(pageviews.filter((e) => ['browser-00', 'browser-01'].includes(String(e.properties!.$browser))), RANGE, (es) => es.length))
})

testOnEachEngine('compare with the previous period, a formula over series, an action series and a BoldNumber', async (_t, engine) => {
  app = apps[engine]
  const short = { date_from: '2024-06-01', date_to: '2024-06-03' }
  const compared = await queryOk(app, trends({ dateRange: short, compareFilter: { compare: true } }))
  assert.deepEqual(compared.results.map((r: { compare_label: string }) => r.compare_label), ['current', 'previous'])
  assert.deepEqual(compared.results[0].data, perDay(pageviews, RANGE.slice(0, 3), (es) => es.length))
  assert.deepEqual(compared.results[1].days, PREVIOUS)
  assert.deepEqual(compared.results[1].data, perDay(pageviews, PREVIOUS, (es) => es.length))

  const action = await privateApi(app).post('/actions/', { name: 'Bought', steps: [{ event: 'purchase' }] })
  assert.equal(action.statusCode, 201, action.body)
  const formula = await queryOk(app, trends({
    series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'ActionsNode', id: action.json().id }],
    trendsFilter: { formula: '(A + B*2) / 2' },
  }))
  assert.equal(formula.results.length, 1)
  assert.equal(formula.results[0].label, 'Formula ((A + B*2) / 2)')
  const views = perDay(pageviews, RANGE, (es) => es.length)
  const bought = perDay(purchases, RANGE, (es) => es.length)
  assert.deepEqual(formula.results[0].data, views.map((v, i) => (v + bought[i]! * 2) / 2))

  const bold = await queryOk(app, trends({ series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], trendsFilter: { display: 'BoldNumber' } }))
  assert.equal(bold.results[0].aggregated_value, uniquePersons(pageviews.filter((e) => inDays(e, RANGE))), 'unique over the range, not a sum of days')
})

testOnEachEngine('invalid queries: 400 in PostHog\'s error body naming the field', async (_t, engine) => {
  app = apps[engine]
  const cases: Array<[unknown, string]> = [
    [{ kind: 'NoSuchQuery' }, 'query.kind'],
    [{ series: [] }, 'query.kind'],
    [trends({ series: [{ kind: 'EventsNode', event: 'x', math: 'bogus' }] }), 'query.series.0.math'],
    [trends({ series: [{ kind: 'EventsNode', event: 'x', math: 'sum' }] }), 'query.series.0.math_property'],
    [trends({ series: [{ kind: 'ActionsNode', id: 999_999 }] }), 'query.series.0.id'],
    [trends({ series: [] }), 'query.series'],
    [trends({ interval: 'fortnight' }), 'query.interval'],
    [trends({ dateRange: { date_from: 'last tuesday' } }), 'query.dateRange.date_from'],
    [trends({ trendsFilter: { formula: 'A + eval(1)' } }), 'query.trendsFilter.formula'],
    [trends({ trendsFilter: { formula: 'A + C' } }), 'query.trendsFilter.formula'],
    [trends({ breakdownFilter: { breakdown: 'x', breakdown_limit: 0 } }), 'query.breakdownFilter.breakdown_limit'],
    [trends({ properties: [{ key: 'x', value: 1, operator: 'sounds_like' }] }), 'query.properties.0.operator'],
    [trends({ properties: [{ key: 'id', value: 424242, type: 'cohort' }] }), 'query.properties'],
  ]
  for (const [query, attr] of cases) {
    const res = await postQuery(app, query)
    assert.equal(res.statusCode, 400, `${JSON.stringify(query)}: ${res.body}`)
    const body = res.json()
    assert.equal(body.type, 'validation_error')
    assert.equal(body.attr, attr, JSON.stringify(query))
    assert.equal(typeof body.code, 'string')
  }
  const noQuery = await app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/query/`, headers: app.auth, payload: {} })
  assert.equal(noQuery.statusCode, 400)
  assert.equal(noQuery.json().attr, 'query')
})

testOnEachEngine('the environments path answers the same, and another project\'s path is a 404', async (_t, engine) => {
  app = apps[engine]
  const res = await app.http.inject({ method: 'POST', url: `/api/environments/${app.projectId}/query/`, headers: app.auth, payload: { query: trends({}) } })
  assert.equal(res.statusCode, 200, res.body)
  const other = await app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId + 1000}/query/`, headers: app.auth, payload: { query: trends({}) } })
  assert.equal(other.statusCode, 404)
})

testOnEachEngine('an action matching elements (the chain parsed in SQL), unique groups, and a static cohort as a filter', async (_t, engine) => {
  app = apps[engine]
  const day = RANGE[1]!
  const extra: TestEvent[] = [
    ...[0, 1, 2].map((i) => ({ event: '$autocapture', distinct_id: `user-${20 + i}`, timestamp: at(day, 50_000 + i), properties: { $elements_chain: 'button.buy:text="Buy now"nth-child="1"nth-of-type="1"' } })),
    { event: '$autocapture', distinct_id: 'user-23', timestamp: at(day, 50_010), properties: { $elements_chain: 'a:href="/home"text="Home"nth-child="1"nth-of-type="1"' } },
    ...['acme', 'acme', 'globex'].map((company, i) => ({ event: 'report', distinct_id: `user-${i}`, timestamp: at(day, 60_000 + i), properties: { $groups: { company } } })),
  ]
  await captureEvents(app, extra, events.length)
  const api = privateApi(app)
  const action = await api.post('/actions/', { name: 'Clicked buy', steps: [{ event: '$autocapture', tag_name: 'button', text: 'Buy now', text_matching: 'exact' }] })
  assert.equal(action.statusCode, 201, action.body)
  const clicks = await queryOk(app, trends({ series: [{ kind: 'ActionsNode', id: action.json().id }] }))
  assert.deepEqual(clicks.results[0].data, RANGE.map((d) => (d === day ? 3 : 0)))
  assert.equal(clicks.results[0].label, 'Clicked buy')

  const groups = await queryOk(app, trends({ series: [{ kind: 'EventsNode', event: 'report', math: 'unique_group', math_group_type_index: 0 }] }))
  assert.deepEqual(groups.results[0].data, RANGE.map((d) => (d === day ? 2 : 0)))

  const cohort = await api.post('/cohorts/', { name: 'Two users', is_static: true, distinct_ids: ['user-10', 'user-11'] })
  assert.equal(cohort.statusCode, 201, cohort.body)
  const members = await queryOk(app, trends({ properties: [{ key: 'id', value: cohort.json().id, type: 'cohort' }] }))
  assert.deepEqual(members.results[0].data, perDay(pageviews.filter((e) => ['user-10', 'user-11'].includes(e.distinct_id)), RANGE, (es) => es.length))
})
