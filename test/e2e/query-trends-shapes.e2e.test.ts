import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { queryOk, seededApps, type TestEvent } from '../helpers/query-data.ts'

// The shapes of trends results as PostHog's TrendsQueryRunner builds them (build_series_response,
// apply_formula_to_results_group, calculate): breakdown labels, the "other" row, total-value displays.
// A small hand-written data set: every count below is read off it.
const OTHER = '$$_posthog_breakdown_other_$$'
const at = (day: string, minute: number) => `2024-06-${day}T10:${String(minute).padStart(2, '0')}:00Z`
const views: Array<[string, string, string]> = [
  // [day, person, browser]: Chrome 5, Firefox 3, Safari 1 in June 3-4; Chrome 2 on June 1 (the previous period).
  ['03', 'p1', 'Chrome'], ['03', 'p1', 'Chrome'], ['03', 'p2', 'Chrome'], ['04', 'p2', 'Chrome'], ['04', 'p1', 'Chrome'],
  ['03', 'p2', 'Firefox'], ['04', 'p2', 'Firefox'], ['04', 'p3', 'Firefox'],
  ['04', 'p3', 'Safari'],
  ['01', 'p1', 'Chrome'], ['02', 'p2', 'Chrome'],
]
const events: TestEvent[] = [
  ...views.map(([day, person, browser], i) => ({ event: '$pageview', distinct_id: person, timestamp: at(day, i), properties: { $browser: browser, $set: { name: person } } })),
  { event: 'signup', distinct_id: 'p1', timestamp: at('03', 50), properties: { $browser: 'Chrome' } },
  { event: 'signup', distinct_id: 'p3', timestamp: at('04', 51), properties: { $browser: 'Firefox' } },
]
const dateRange = { date_from: '2024-06-03', date_to: '2024-06-04' }
const pageviews = { kind: 'EventsNode', event: '$pageview' }
const trends = (extra: Record<string, unknown>) => ({ kind: 'TrendsQuery', dateRange, interval: 'day', series: [pageviews], ...extra })
const byBrowser = { breakdown: '$browser', breakdown_type: 'event' }
type Result = { label: string; breakdown_value: unknown; data: number[]; count: number; compare_label?: string; aggregated_value?: number; days: string[] }

const seeded = seededApps(events)

testOnEachEngine('one series broken down: each result is labelled by its value alone; several series: "<series> - <value>"', async (_t, engine) => {
  const one = await queryOk(seeded.app(engine), trends({ breakdownFilter: byBrowser }))
  assert.deepEqual(one.results.map((r: Result) => [r.label, r.breakdown_value, r.count]), [['Chrome', 'Chrome', 5], ['Firefox', 'Firefox', 3], ['Safari', 'Safari', 1]])

  const two = await queryOk(seeded.app(engine), trends({ series: [pageviews, { kind: 'EventsNode', event: 'signup' }], breakdownFilter: byBrowser }))
  assert.deepEqual(two.results.map((r: Result) => [r.label, r.count]), [['$pageview - Chrome', 5], ['$pageview - Firefox', 3], ['$pageview - Safari', 1], ['signup - Chrome', 1], ['signup - Firefox', 1]])
})

testOnEachEngine('under compare, one series broken down keeps the value alone as its label in both periods', async (_t, engine) => {
  const body = await queryOk(seeded.app(engine), trends({ breakdownFilter: byBrowser, compareFilter: { compare: true } }))
  const rows = body.results.map((r: Result) => [r.compare_label, r.label, r.count])
  assert.deepEqual(rows.filter((r: unknown[]) => r[0] === 'current'), [['current', 'Chrome', 5], ['current', 'Firefox', 3], ['current', 'Safari', 1]])
  assert.deepEqual(rows.filter((r: unknown[]) => r[0] === 'previous'), [['previous', 'Chrome', 2]])
})

testOnEachEngine('event x person multiple breakdown: the label is the parts joined by "::"', async (_t, engine) => {
  const body = await queryOk(seeded.app(engine), trends({ breakdownFilter: { breakdowns: [{ property: '$browser', type: 'event' }, { property: 'name', type: 'person' }] } }))
  const labels = new Map(body.results.map((r: Result) => [r.label, [r.breakdown_value, r.count]]))
  assert.deepEqual(labels.get('Chrome::p1'), [['Chrome', 'p1'], 3])
  assert.deepEqual(labels.get('Firefox::p2'), [['Firefox', 'p2'], 2])
  assert.equal(labels.size, 5)
})

testOnEachEngine('a formula over broken-down series: every result is "Formula (<formula>)"', async (_t, engine) => {
  const body = await queryOk(seeded.app(engine), trends({ series: [pageviews, { kind: 'EventsNode', event: 'signup' }], breakdownFilter: byBrowser, trendsFilter: { formula: 'A+2*B' } }))
  const byValue = new Map(body.results.map((r: Result) => [r.breakdown_value, r]))
  assert.deepEqual([...byValue.values()].map((r) => (r as Result).label), Array(3).fill('Formula (A+2*B)'))
  assert.equal((byValue.get('Chrome') as Result).count, 5 + 2 * 1)
  assert.equal((byValue.get('Firefox') as Result).count, 3 + 2 * 1)
})

testOnEachEngine('breakdown_hide_other_aggregation drops the "other" row; hasMore says values were left out', async (_t, engine) => {
  const shown = await queryOk(seeded.app(engine), trends({ breakdownFilter: { ...byBrowser, breakdown_limit: 1 } }))
  assert.deepEqual(shown.results.map((r: Result) => [r.breakdown_value, r.count]), [['Chrome', 5], [OTHER, 4]])
  assert.equal(shown.hasMore, true)

  const hidden = await queryOk(seeded.app(engine), trends({ breakdownFilter: { ...byBrowser, breakdown_limit: 1, breakdown_hide_other_aggregation: true } }))
  assert.deepEqual(hidden.results.map((r: Result) => [r.breakdown_value, r.count]), [['Chrome', 5]])
  assert.equal(hidden.hasMore, true)

  const multiple = await queryOk(seeded.app(engine), trends({ breakdownFilter: { breakdowns: [{ property: '$browser', type: 'event' }], breakdown_limit: 2, breakdown_hide_other_aggregation: true } }))
  assert.deepEqual(multiple.results.map((r: Result) => r.breakdown_value), [['Chrome'], ['Firefox']])

  const all = await queryOk(seeded.app(engine), trends({ breakdownFilter: { ...byBrowser, breakdown_hide_other_aggregation: true } }))
  assert.equal(all.results.length, 3)
  assert.equal(all.hasMore, false)
})

testOnEachEngine('BoldNumber: the number in aggregated_value, with days [] and count 0, as PostHog answers a total value', async (_t, engine) => {
  const body = await queryOk(seeded.app(engine), trends({ series: [{ ...pageviews, math: 'dau' }], trendsFilter: { display: 'BoldNumber' } }))
  const [r] = body.results
  assert.equal(r.aggregated_value, 3)
  assert.deepEqual(r.days, [])
  assert.equal(r.count, 0)
  assert.deepEqual(r.data, [])
  assert.equal('labels' in r, false)

  const formula = await queryOk(seeded.app(engine), trends({ series: [pageviews, { kind: 'EventsNode', event: 'signup' }], trendsFilter: { display: 'BoldNumber', formula: 'A+2*B' } }))
  assert.equal(formula.results[0].aggregated_value, 9 + 2 * 2)
  assert.equal(formula.results[0].count, 0)
  assert.equal(formula.results[0].label, 'Formula (A+2*B)')
})
