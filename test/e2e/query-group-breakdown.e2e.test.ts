import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { captureEvents, postQuery, queryOk, type TestEvent } from '../helpers/query-data.ts'

// Companies (group type 0) with a plan set by $groupidentify (one changes plan later: its current
// value counts, as PostHog's groups table holds it); events name their company in $groups.
const COMPANIES: Record<string, string[]> = { acme: ['free', 'pro'], globex: ['free'], initech: ['enterprise'], umbrella: ['pro'] }
const currentPlan = (c: string) => COMPANIES[c]!.at(-1)!
const identifies: TestEvent[] = Object.entries(COMPANIES).flatMap(([company, plans], i) =>
  plans.map((plan, j) => ({ event: '$groupidentify', distinct_id: 'admin', timestamp: `2024-06-01T0${i}:0${j}:00Z`, properties: { $group_type: 'company', $group_key: company, $group_set: { plan, seats: 10 * (i + 1) } } })))
const usage: TestEvent[] = []
for (const [i, company] of ['acme', 'acme', 'acme', 'globex', 'initech', 'initech', 'umbrella', 'nobody'].entries()) {
  usage.push({ event: 'signup', distinct_id: `u${i}`, timestamp: `2024-06-02T1${i}:00:00Z`, properties: { $groups: { company } } })
  if (i % 2 === 0) usage.push({ event: 'purchase', distinct_id: `u${i}`, timestamp: `2024-06-03T1${i}:00:00Z`, properties: { $groups: { company } } })
}
usage.push({ event: 'signup', distinct_id: 'solo', timestamp: '2024-06-02T20:00:00Z' })

const dateRange = { date_from: '2024-06-01', date_to: '2024-06-05' }
const planOf = (e: TestEvent) => {
  const company = (e.properties?.$groups as { company?: string } | undefined)?.company
  return company && COMPANIES[company] ? currentPlan(company) : '$$_posthog_breakdown_null_$$'
}

testOnEachEngine('trends and funnels break down by a group property: the current value of the event\'s group', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, identifies)
  await captureEvents(app, usage, identifies.length)
  const breakdownFilter = { breakdown: 'plan', breakdown_type: 'group', breakdown_group_type_index: 0 }

  const trends = await queryOk(app, { kind: 'TrendsQuery', dateRange, interval: 'day', series: [{ kind: 'EventsNode', event: 'signup' }], breakdownFilter })
  const expected = new Map<string, number>()
  for (const e of usage.filter((x) => x.event === 'signup')) expected.set(planOf(e), (expected.get(planOf(e)) ?? 0) + 1)
  const actual = new Map(trends.results.map((r: { breakdown_value: string; count: number }) => [r.breakdown_value, r.count]))
  assert.deepEqual(actual, expected)
  assert.ok(expected.get('pro')! >= 4, 'acme counts under its current plan')

  const funnel = await queryOk(app, {
    kind: 'FunnelsQuery', dateRange, series: [{ kind: 'EventsNode', event: 'signup' }, { kind: 'EventsNode', event: 'purchase' }], breakdownFilter,
  })
  const byValue = new Map(funnel.results.map((steps: Array<{ breakdown_value: string[]; count: number }>) => [steps[0]!.breakdown_value[0], steps.map((s) => s.count)]))
  const expectedFunnel = new Map<string, number[]>()
  for (const e of usage.filter((x) => x.event === 'signup')) {
    const bought = usage.some((x) => x.event === 'purchase' && x.distinct_id === e.distinct_id)
    const [a, b] = expectedFunnel.get(planOf(e)) ?? [0, 0]
    expectedFunnel.set(planOf(e), [a! + 1, b! + (bought ? 1 : 0)])
  }
  assert.deepEqual(byValue, expectedFunnel)

  const missing = await postQuery(app, { kind: 'TrendsQuery', dateRange, series: [{ kind: 'EventsNode', event: 'signup' }], breakdownFilter: { breakdown: 'plan', breakdown_type: 'group' } })
  assert.equal(missing.statusCode, 400)
  assert.equal(missing.json().attr, 'query.breakdownFilter.breakdown_group_type_index')
})

testOnEachEngine('multiple breakdowns: each value is the list of its parts (event property, then group property), top values by total', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, identifies)
  const withBrowser = usage.map((e, i) => ({ ...e, properties: { ...e.properties, $browser: i % 3 === 0 ? 'Firefox' : 'Chrome' } }))
  await captureEvents(app, withBrowser, identifies.length)
  const breakdownFilter = { breakdowns: [{ property: '$browser', type: 'event' }, { property: 'plan', type: 'group', group_type_index: 0 }], breakdown_limit: 3 }

  const trends = await queryOk(app, { kind: 'TrendsQuery', dateRange, interval: 'day', series: [{ kind: 'EventsNode', event: 'signup' }], breakdownFilter })
  const counts = new Map<string, number>()
  for (const e of withBrowser.filter((x) => x.event === 'signup')) {
    const k = JSON.stringify([e.properties.$browser ?? '$$_posthog_breakdown_null_$$', planOf(e)])
    counts.set(k, (counts.get(k) ?? 0) + 1)
  }
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  assert.ok(ranked.length > 3, 'more combinations than the limit')
  const kept = ranked.slice(0, 3)
  const other = ranked.slice(3).reduce((sum, [, n]) => sum + n, 0)
  const actual = trends.results.map((r: { breakdown_value: string[]; count: number; label: string }) => [r.breakdown_value, r.count, r.label])
  assert.deepEqual(actual.slice(0, 3).map((r: unknown[]) => r[1]), kept.map(([, n]) => n))
  assert.deepEqual(new Set(actual.slice(0, 3).map((r: unknown[]) => JSON.stringify(r[0]))), new Set(kept.map(([k]) => k)))
  assert.deepEqual(actual[3]!.slice(0, 2), [['$$_posthog_breakdown_other_$$'], other])
  const first = actual[0] as [string[], number, string]
  assert.equal(first[2], first[0].join('::'))

  const funnel = await queryOk(app, { kind: 'FunnelsQuery', dateRange, series: [{ kind: 'EventsNode', event: 'signup' }, { kind: 'EventsNode', event: 'purchase' }], breakdownFilter: { ...breakdownFilter, breakdown_limit: 25 } })
  const entered = new Map(funnel.results.map((steps: Array<{ breakdown_value: string[]; count: number }>) => [JSON.stringify(steps[0]!.breakdown_value), steps[0]!.count]))
  assert.deepEqual(entered, counts)

  const tooMany = await postQuery(app, { kind: 'TrendsQuery', dateRange, series: [{ kind: 'EventsNode', event: 'signup' }], breakdownFilter: { breakdowns: [1, 2, 3, 4].map(() => ({ property: 'x' })) } })
  assert.equal(tooMany.json().attr, 'query.breakdownFilter.breakdowns')
})
