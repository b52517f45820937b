import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { captureEvents, postQuery, queryOk, seededRandom, type TestEvent } from '../helpers/query-data.ts'
import { expectedSteps, mean, refFunnel, type Ev, type RefOptions, type RefResult } from '../helpers/funnel-reference.ts'

// Funnel breakdowns where a person's events carry different values (the browser changes from event
// to event, some events have none), so PostHog's attribution types give different answers; and
// funnels of groups (companies) instead of persons. The expected answers come from the reference
// matcher run per attributed value, as PostHog's UDF runs it.
const rand = seededRandom(7)
const DAY = 86_400_000
const BASE = Date.parse('2024-03-01T00:00:00Z')
const STEPS = ['view', 'cart', 'buy']
const BROWSERS = ['Chrome', 'Firefox', 'Safari']
const NONE = '$$_posthog_breakdown_null_$$'
const COMPANIES = ['acme', 'globex', 'initech', 'umbrella', 'hooli']

interface Row extends Ev { person: string; company: string | undefined }
const rows: Row[] = []
const events: TestEvent[] = []
for (let p = 0; p < 60; p++) {
  const count = 3 + Math.floor(rand() * 8)
  const company = p % 6 === 5 ? undefined : COMPANIES[p % COMPANIES.length]
  const times = new Set<number>()
  while (times.size < count) times.add(BASE + Math.floor(rand() * 9 * 86_400) * 1000)
  for (const t of [...times].sort((a, b) => a - b)) {
    const r = rand()
    const event = r < 0.35 ? 'view' : r < 0.6 ? 'cart' : r < 0.85 ? 'buy' : 'noise'
    const b = rand()
    const browser = b < 0.15 ? undefined : BROWSERS[Math.floor(b * 10) % BROWSERS.length]
    const properties: Record<string, unknown> = {}
    if (browser) properties.$browser = browser
    if (company) properties.$groups = { company }
    events.push({ event, distinct_id: `user-${p}`, timestamp: new Date(t).toISOString(), properties })
    rows.push({ t, event, browser: browser ?? NONE, person: `user-${p}`, company })
  }
}
const dateRange = { date_from: '2024-03-01', date_to: '2024-03-10' }
const WINDOW = 2 * DAY
const base: RefOptions = { steps: STEPS, windowMs: WINDOW, order: 'ordered' }

function byActor(actor: (r: Row) => string | undefined): Map<string, Ev[]> {
  const out = new Map<string, Ev[]>()
  for (const r of rows) {
    const a = actor(r)
    if (a === undefined) continue
    out.set(a, [...(out.get(a) ?? []), r])
  }
  for (const list of out.values()) list.sort((x, y) => x.t - y.t)
  return out
}

type Attribution = { type: 'first_touch' | 'last_touch' | 'all_events' } | { type: 'step'; step: number }

/** The (value, result) pairs one person counts under, as PostHog's UDF attributes them. */
function attributed(evs: Ev[], a: Attribution, o: RefOptions = base): Array<[string, RefResult | null]> {
  const funnelEvents = evs.filter((e) => STEPS.includes(e.event))
  const withValue = funnelEvents.filter((e) => e.browser !== NONE)
  switch (a.type) {
    case 'first_touch':
      return [[withValue[0]?.browser ?? NONE, refFunnel(evs, o)]]
    case 'last_touch':
      return [[withValue.at(-1)?.browser ?? NONE, refFunnel(evs, o)]]
    case 'all_events':
      return [...new Set(funnelEvents.map((e) => e.browser))].map((v) => [v, refFunnel(evs.filter((e) => e.browser === v), o)])
    case 'step': {
      const values = new Set(evs.filter((e) => e.event === STEPS[a.step]).map((e) => e.browser))
      return [...values].map((v) => [v, refFunnel(evs, { ...o, stepGate: (k, e) => k !== a.step || e.browser === v })])
    }
  }
}

function expectedByValue(a: Attribution): Map<string, ReturnType<typeof expectedSteps>> {
  const groups = new Map<string, RefResult[]>()
  for (const evs of byActor((r) => r.person).values()) {
    for (const [v, r] of attributed(evs, a)) if (r) groups.set(v, [...(groups.get(v) ?? []), r])
  }
  return new Map([...groups].map(([v, rs]) => [v, expectedSteps(rs, STEPS.length)]))
}

const funnel = (filter: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  kind: 'FunnelsQuery',
  series: STEPS.map((event) => ({ kind: 'EventsNode', event })),
  dateRange,
  breakdownFilter: { breakdown: '$browser', breakdown_type: 'event', breakdown_limit: 10 },
  funnelsFilter: { funnelWindowInterval: 2, funnelWindowIntervalUnit: 'day', ...filter },
  ...extra,
})

function assertByValue(results: Array<Array<Record<string, any>>>, expected: Map<string, ReturnType<typeof expectedSteps>>, what: string) {
  const actual = new Map(results.map((steps) => [steps[0]!.breakdown_value[0] as string, steps]))
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort(), `${what}: values`)
  for (const [v, exp] of expected) {
    const steps = actual.get(v)!
    assert.deepEqual(steps.map((s) => s.count), exp.map((s) => s.count), `${what} ${v}: counts`)
    for (const [k, s] of exp.entries()) {
      if (s.average_conversion_time === null) assert.equal(steps[k]!.average_conversion_time, null)
      else assert.ok(Math.abs(steps[k]!.average_conversion_time - s.average_conversion_time) < 1e-6, `${what} ${v} step ${k}: average`)
      if (s.median_conversion_time === null) assert.equal(steps[k]!.median_conversion_time, null)
      else assert.ok(Math.abs(steps[k]!.median_conversion_time - s.median_conversion_time) < 1e-6, `${what} ${v} step ${k}: median`)
    }
  }
}

async function seeded(t: Parameters<typeof buildTestApp>[0], engine: Engine): Promise<TestApp> {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, events)
  return app
}

testOnEachEngine('funnel breakdown attribution: first touch, last touch, all events and a step each count persons as PostHog does', async (t, engine) => {
  const app = await seeded(t, engine)
  const answers: Record<string, Map<string, ReturnType<typeof expectedSteps>>> = {}
  const cases: Array<[string, Attribution, Record<string, unknown>]> = [
    ['default (first touch)', { type: 'first_touch' }, {}],
    ['first_touch', { type: 'first_touch' }, { breakdownAttributionType: 'first_touch' }],
    ['last_touch', { type: 'last_touch' }, { breakdownAttributionType: 'last_touch' }],
    ['all_events', { type: 'all_events' }, { breakdownAttributionType: 'all_events' }],
    ['step 1', { type: 'step', step: 1 }, { breakdownAttributionType: 'step', breakdownAttributionValue: 1 }],
    ['step 0', { type: 'step', step: 0 }, { breakdownAttributionType: 'step', breakdownAttributionValue: 0 }],
  ]
  for (const [what, attribution, filter] of cases) {
    const res = await queryOk(app, funnel(filter))
    const expected = expectedByValue(attribution)
    assertByValue(res.results, expected, what)
    answers[what] = expected
  }
  // The data set tells the attributions apart, and persons without a browser show under the null marker.
  const counts = (m: Map<string, ReturnType<typeof expectedSteps>>) => JSON.stringify([...m].sort().map(([v, s]) => [v, s.map((x) => x.count)]))
  const distinct = new Set(['first_touch', 'last_touch', 'all_events', 'step 1', 'step 0'].map((k) => counts(answers[k]!)))
  assert.equal(distinct.size, 5, 'each attribution gives a different answer')
  assert.ok(answers.all_events!.has(NONE), 'events without a browser form their own value')
  const enteredAll = [...answers.all_events!.values()].reduce((sum, s) => sum + s[0]!.count, 0)
  const persons = [...byActor((r) => r.person).values()].filter((evs) => evs.some((e) => e.event === 'view')).length
  assert.ok(enteredAll > persons, 'all_events counts a person under each of their values')
})

testOnEachEngine('funnel trends and time to convert with a breakdown', async (t, engine) => {
  const app = await seeded(t, engine)
  const trends = await queryOk(app, funnel({ funnelVizType: 'trends' }, { interval: 'day' }))
  const firstTouch = new Map([...byActor((r) => r.person)].map(([p, evs]) => [p, attributed(evs, { type: 'first_touch' })[0]![0]]))
  const values = [...new Set(firstTouch.values())].sort()
  assert.deepEqual(trends.results.map((s: any) => s.breakdown_value[0]), values, 'one series per value, in value order')
  for (const series of trends.results) {
    const v = series.breakdown_value[0] as string
    const expected = Array.from({ length: 10 }, (_, i) => {
      const start = BASE + i * DAY
      let entered = 0
      let converted = 0
      for (const [p, evs] of byActor((r) => r.person)) {
        if (firstTouch.get(p) !== v) continue
        const r = refFunnel(evs.filter((e) => e.t >= start), { ...base, entryFilter: (e) => e.t < start + DAY })
        if (!r) continue
        entered++
        if (r.level === 2) converted++
      }
      return entered === 0 ? 0 : Math.round((converted / entered) * 10_000) / 100
    })
    assert.deepEqual(series.data, expected, `trends of ${v}`)
  }
  assert.ok(trends.results.some((s: any) => s.data.some((x: number) => x > 0)))

  // Time to convert is over everyone (first touch puts each person under one value): the same histogram.
  const ttc = await queryOk(app, funnel({ funnelVizType: 'time_to_convert', binCount: 4 }))
  const plain = await queryOk(app, { ...funnel({ funnelVizType: 'time_to_convert', binCount: 4 }), breakdownFilter: undefined })
  assert.deepEqual(ttc.results, plain.results)
  const secs = [...byActor((r) => r.person).values()].map((evs) => refFunnel(evs, base)).filter((r) => r?.level === 2).map((r) => (r!.times[2]! - r!.times[0]!) / 1000)
  assert.ok(Math.abs(plain.results.average_conversion_time - mean(secs)!) < 1e-6)
})

testOnEachEngine('funnels of groups: a company goes through the steps with the events of all its members', async (t, engine) => {
  const app = await seeded(t, engine)
  const res = await queryOk(app, { ...funnel(), breakdownFilter: undefined, aggregation_group_type_index: 0 })
  const companies = [...byActor((r) => r.company).values()].map((evs) => refFunnel(evs, base)).filter((r): r is RefResult => r !== null)
  const expected = expectedSteps(companies, 3)
  assert.deepEqual(res.results.map((s: any) => s.count), expected.map((s) => s.count))
  assert.ok(Math.abs(res.results[1].average_conversion_time - expected[1]!.average_conversion_time!) < 1e-6)
  assert.ok(expected[0]!.count <= COMPANIES.length && expected[0]!.count > 0)
  // Persons give another answer (the group funnel is not the person funnel under another name).
  const persons = await queryOk(app, { ...funnel(), breakdownFilter: undefined })
  assert.notDeepEqual(persons.results.map((s: any) => s.count), res.results.map((s: any) => s.count))
})

testOnEachEngine('funnel attribution and aggregation refuse what PostHog refuses, naming the field', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const cases: Array<[unknown, string]> = [
    [funnel({ funnelOrderType: 'unordered', breakdownAttributionType: 'step', breakdownAttributionValue: 1 }), 'query.funnelsFilter.breakdownAttributionValue'],
    [funnel({ breakdownAttributionType: 'step', breakdownAttributionValue: 5 }), 'query.funnelsFilter.breakdownAttributionValue'],
    [funnel({ breakdownAttributionType: 'middle_touch' }), 'query.funnelsFilter.breakdownAttributionType'],
    [funnel({}, { aggregation_group_type_index: 9 }), 'query.aggregation_group_type_index'],
  ]
  for (const [query, attr] of cases) {
    const r = await postQuery(app, query)
    assert.equal(r.statusCode, 400, `${attr}: ${r.body}`)
    assert.equal(r.json().attr, attr, r.body)
  }
})
