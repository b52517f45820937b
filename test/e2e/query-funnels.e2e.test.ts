import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { funnelQuery, captureEvents, postQuery, queryOk, seededRandom, type TestEvent } from '../helpers/query-data.ts'
import { expectedSteps, mean, refFunnel, refUnorderedEntries, type Ev, type RefOptions, type RefResult } from '../helpers/funnel-reference.ts'

// Funnels against a reference written here: PostHog's per-person matcher (its Python UDF, event by
// event: entered timestamps per step, latest entry kept, strict resets, exclusions, stop at the goal),
// run over the fixture in plain JS. Tally computes the same with window functions in DuckDB, so the
// two only agree if the set-based plan really is the matcher.
const rand = seededRandom(42)
const DAY = 86_400_000
const BASE = Date.parse('2024-03-01T00:00:00Z')
const STEPS = ['view', 'cart', 'buy']
const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge']
const events: TestEvent[] = []
const personOf = (id: string) => id.replace(/^anon-/, 'user-')
for (let p = 0; p < 70; p++) {
  const count = 2 + Math.floor(rand() * 9)
  const browser = BROWSERS[Math.floor(rand() * rand() * BROWSERS.length)]!
  // Distinct seconds per event of a person, spread over 2024-02-27..2024-03-13 (the range is 03-01..03-10).
  const times = new Set<number>()
  while (times.size < count) times.add(BASE - 3 * DAY + Math.floor(rand() * 15 * 86_400) * 1000)
  for (const t of [...times].sort((a, b) => a - b)) {
    const r = rand()
    const event = r < 0.3 ? 'view' : r < 0.55 ? 'cart' : r < 0.75 ? 'buy' : r < 0.9 ? 'noise' : 'refund'
    const distinctId = p < 8 && t < BASE + 2 * DAY ? `anon-${p}` : `user-${p}`
    events.push({ event, distinct_id: distinctId, timestamp: new Date(t).toISOString(), properties: { $browser: browser } })
  }
}
// Persons 0-7 browsed anonymously until day 2, then identified: one person each.
for (let p = 0; p < 8; p++) events.push({ event: '$identify', distinct_id: `user-${p}`, timestamp: new Date(BASE + 2 * DAY + p * 1000).toISOString(), properties: { $anon_distinct_id: `anon-${p}` } })

const RANGE = { from: BASE, to: BASE + 10 * DAY } // 2024-03-01 .. 2024-03-10 inclusive, UTC
const dateRange = { date_from: '2024-03-01', date_to: '2024-03-10' }

function eventsByPerson(): Map<string, Ev[]> {
  const out = new Map<string, Ev[]>()
  for (const e of events) {
    const t = Date.parse(e.timestamp)
    if (t < RANGE.from || t >= RANGE.to) continue
    const list = out.get(personOf(e.distinct_id)) ?? []
    list.push({ t, event: e.event, browser: String(e.properties?.$browser) })
    out.set(personOf(e.distinct_id), list)
  }
  for (const list of out.values()) list.sort((a, b) => a.t - b.t)
  return out
}

function refAll(o: RefOptions, filter: (evs: Ev[]) => boolean = () => true): Map<string, RefResult> {
  const out = new Map<string, RefResult>()
  for (const [p, evs] of eventsByPerson()) {
    if (!filter(evs)) continue
    const r = refFunnel(evs, o)
    if (r) out.set(p, r)
  }
  return out
}

const funnel = (extra: Record<string, unknown> = {}, filter: Record<string, unknown> = {}) => funnelQuery(STEPS, dateRange, extra, filter)

function assertSteps(actual: Array<Record<string, any>>, expected: ReturnType<typeof expectedSteps>, what: string) {
  assert.deepEqual(actual.map((s) => s.count), expected.map((s) => s.count), `${what}: counts`)
  for (const [k, s] of expected.entries()) {
    for (const key of ['average_conversion_time', 'median_conversion_time'] as const) {
      const a = actual[k]![key]
      if (s[key] === null) assert.equal(a, null, `${what}: step ${k} ${key}`)
      else assert.ok(Math.abs(a - s[key]!) < 1e-6, `${what}: step ${k} ${key} ${a} != ${s[key]}`)
    }
  }
}

async function seeded(t: Parameters<typeof buildTestApp>[0], engine: Engine): Promise<TestApp> {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, events)
  return app
}

testOnEachEngine('funnel steps: ordered, strict and unordered agree with the per-person matcher, and differ from each other', async (t, engine) => {
  const app = await seeded(t, engine)
  const windowMs = 2 * DAY
  const counts: Record<string, number[]> = {}
  for (const order of ['ordered', 'strict', 'unordered'] as const) {
    const res = await queryOk(app, funnel({}, { funnelOrderType: order }))
    const expected = expectedSteps([...refAll({ steps: STEPS, windowMs, order }).values()], 3)
    assertSteps(res.results, expected, order)
    counts[order] = expected.map((s) => s.count)
    // Unordered steps are named by how many were done (PostHog's FunnelUnordered._serialize_step).
    const names = order === 'unordered' ? STEPS.map((_, i) => [`Completed ${i + 1} step${i ? 's' : ''}`, i, 'events', null]) : STEPS.map((s, i) => [s, i, 'events', s])
    assert.deepEqual(res.results.map((s: any) => [s.name, s.order, s.type, s.action_id]), names)
  }
  // The data set tells the orders apart (otherwise this test could not catch a mix-up).
  assert.notDeepEqual(counts.ordered, counts.unordered)
  assert.notDeepEqual(counts.ordered, counts.strict)
  assert.ok(counts.ordered![2]! > 0 && counts.strict![2]! > 0, 'some persons convert')

  // A shorter window converts fewer persons; still the matcher's answer.
  const hour = await queryOk(app, funnel({}, { funnelWindowInterval: 6, funnelWindowIntervalUnit: 'hour' }))
  const expectedHour = expectedSteps([...refAll({ steps: STEPS, windowMs: 6 * 3_600_000, order: 'ordered' }).values()], 3)
  assertSteps(hour.results, expectedHour, '6-hour window')
  assert.ok(expectedHour[2]!.count < counts.ordered![2]!)
})

testOnEachEngine('funnel exclusions drop persons who did the excluded event between the steps', async (t, engine) => {
  const app = await seeded(t, engine)
  const exclusions = [{ kind: 'EventsNode', event: 'refund', funnelFromStep: 0, funnelToStep: 1 }]
  const res = await queryOk(app, funnel({}, { exclusions }))
  const ref = refAll({ steps: STEPS, windowMs: 2 * DAY, order: 'ordered', exclusions: [{ event: 'refund', from: 0, to: 1 }] })
  assertSteps(res.results, expectedSteps([...ref.values()], 3), 'exclusion 0-1')
  const without = refAll({ steps: STEPS, windowMs: 2 * DAY, order: 'ordered' })
  assert.ok(ref.size < without.size, 'the exclusion removes someone')

  const late = await queryOk(app, funnel({}, { exclusions: [{ ...exclusions[0], funnelFromStep: 1, funnelToStep: 2 }] }))
  const refLate = refAll({ steps: STEPS, windowMs: 2 * DAY, order: 'ordered', exclusions: [{ event: 'refund', from: 1, to: 2 }] })
  assertSteps(late.results, expectedSteps([...refLate.values()], 3), 'exclusion 1-2')
})

testOnEachEngine('funnel breakdown: one step list per value of the first step event, the rest as "other"', async (t, engine) => {
  const app = await seeded(t, engine)
  const res = await queryOk(app, funnel({ breakdownFilter: { breakdown: '$browser', breakdown_type: 'event', breakdown_limit: 2 } }))
  const ref = refAll({ steps: STEPS, windowMs: 2 * DAY, order: 'ordered' })
  const byPerson = eventsByPerson()
  const browserOf = (p: string) => byPerson.get(p)!.find((e) => e.event === 'view')!.browser
  const groups = new Map<string, RefResult[]>()
  for (const [p, r] of ref) groups.set(browserOf(p), [...(groups.get(browserOf(p)) ?? []), r])
  const ranked = [...groups.entries()].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))
  assert.ok(ranked.length > 2, 'more values than the limit')
  const top = ranked.slice(0, 2)
  const other = ranked.slice(2).flatMap(([, rs]) => rs)
  assert.equal(res.results.length, 3)
  for (const [i, [value, rs]] of [...top, ['$$_posthog_breakdown_other_$$', other] as const].entries()) {
    assert.deepEqual(res.results[i][0].breakdown_value, [value])
    assertSteps(res.results[i], expectedSteps(rs as RefResult[], 3), `breakdown ${value}`)
  }
})

testOnEachEngine('time to convert: a histogram of persons by seconds from the first to the last step', async (t, engine) => {
  const app = await seeded(t, engine)
  const res = await queryOk(app, funnel({}, { funnelVizType: 'time_to_convert', binCount: 5 }))
  const secs = [...refAll({ steps: STEPS, windowMs: 2 * DAY, order: 'ordered' }).values()].filter((r) => r.level === 2).map((r) => (r.times[2]! - r.times[0]!) / 1000)
  const min = Math.floor(Math.min(...secs))
  const width = Math.max(1, Math.ceil((Math.max(...secs) - min) / 5))
  const bins = Array.from({ length: Math.floor((Math.max(...secs) - min) / width) + 1 }, (_, i) => [min + i * width, secs.filter((s) => Math.floor((s - min) / width) === i).length])
  assert.deepEqual(res.results.bins, bins)
  assert.ok(Math.abs(res.results.average_conversion_time - mean(secs)!) < 1e-6)
  assert.equal(bins.reduce((a, [, c]) => a + c!, 0), secs.length)
})

testOnEachEngine('conversion trends: per day of entry, the share of entrants who converted from an entry that day', async (t, engine) => {
  const app = await seeded(t, engine)
  const res = await queryOk(app, funnel({ interval: 'day' }, { funnelVizType: 'trends' }))
  const [series] = res.results
  const days = Array.from({ length: 10 }, (_, i) => new Date(BASE + i * DAY).toISOString().slice(0, 10))
  assert.deepEqual(series.days, days)
  const expected = days.map((_, i) => {
    const start = BASE + i * DAY
    let entered = 0
    let converted = 0
    for (const evs of eventsByPerson().values()) {
      const r = refFunnel(evs.filter((e) => e.t >= start), { steps: STEPS, windowMs: 2 * DAY, order: 'ordered', entryFilter: (e) => e.t < start + DAY })
      if (!r) continue
      entered++
      if (r.level === 2) converted++
    }
    return entered === 0 ? 0 : Math.round((converted / entered) * 10_000) / 100
  })
  assert.deepEqual(series.data, expected)
  assert.ok(expected.some((v) => v > 0))
})

testOnEachEngine('unordered funnels: exclusions over the whole funnel, and conversion trends by the interval a path starts in', async (t, engine) => {
  const app = await seeded(t, engine)
  const exclusions = [{ kind: 'EventsNode', event: 'refund', funnelFromStep: 0, funnelToStep: 2 }]
  const res = await queryOk(app, funnel({}, { funnelOrderType: 'unordered', exclusions }))
  const ref = refAll({ steps: STEPS, windowMs: 2 * DAY, order: 'unordered', exclusions: [{ event: 'refund', from: 0, to: 2 }] })
  assertSteps(res.results, expectedSteps([...ref.values()], 3), 'unordered with exclusion')
  assert.ok(ref.size < refAll({ steps: STEPS, windowMs: 2 * DAY, order: 'unordered' }).size, 'the exclusion removes someone')

  const days = Array.from({ length: 10 }, (_, i) => BASE + i * DAY)
  const dayOf = (t: number) => Math.floor((t - BASE) / DAY)
  for (const withExclusion of [false, true]) {
    const o: RefOptions = { steps: STEPS, windowMs: 2 * DAY, order: 'unordered', exclusions: withExclusion ? [{ event: 'refund', from: 0, to: 2 }] : [] }
    const trends = await queryOk(app, funnel({ interval: 'day' }, { funnelOrderType: 'unordered', funnelVizType: 'trends', ...(withExclusion ? { exclusions } : {}) }))
    const perPerson = [...eventsByPerson().values()].map((evs) => refUnorderedEntries(evs, o, dayOf))
    const expected = days.map((_, i) => {
      const levels = perPerson.map((m) => m.get(i)).filter((l): l is number => l !== undefined)
      return levels.length === 0 ? 0 : Math.round((levels.filter((l) => l === 2).length / levels.length) * 10_000) / 100
    })
    assert.deepEqual(trends.results[0].data, expected, `unordered trends${withExclusion ? ' with exclusion' : ''}`)
    assert.deepEqual(trends.results[0].reached_from_step_count, days.map((_, i) => perPerson.filter((m) => m.has(i)).length))
    assert.ok(expected.some((v) => v > 0))
  }
})

testOnEachEngine('funnels count a person merged by $identify once, and refuse what they cannot compute, naming the field', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, [
    { event: 'view', distinct_id: 'anon-x', timestamp: '2024-03-02T10:00:00Z' },
    { event: 'cart', distinct_id: 'user-x', timestamp: '2024-03-02T11:00:00Z' },
    { event: '$identify', distinct_id: 'user-x', timestamp: '2024-03-02T10:30:00Z', properties: { $anon_distinct_id: 'anon-x' } },
    { event: 'buy', distinct_id: 'user-x', timestamp: '2024-03-02T12:00:00Z' },
  ])
  const res = await queryOk(app, funnel())
  assert.deepEqual(res.results.map((s: any) => s.count), [1, 1, 1])
  assert.equal(res.results[1].average_conversion_time, 3600)

  const cases: Array<[unknown, string]> = [
    [{ ...funnel(), series: [] }, 'query.series'],
    [funnel({}, { funnelOrderType: 'sideways' }), 'query.funnelsFilter.funnelOrderType'],
    [funnel({}, { funnelWindowIntervalUnit: 'fortnight' }), 'query.funnelsFilter.funnelWindowIntervalUnit'],
    [funnel({}, { funnelVizType: 'pie' }), 'query.funnelsFilter.funnelVizType'],
    [funnel({}, { exclusions: [{ kind: 'EventsNode', event: 'x', funnelFromStep: 2, funnelToStep: 1 }] }), 'query.funnelsFilter.exclusions.0.funnelFromStep'],
    [funnel({}, { funnelToStep: 7 }), 'query.funnelsFilter.funnelToStep'],
    [funnel({}, { funnelOrderType: 'unordered', exclusions: [{ kind: 'EventsNode', event: 'x', funnelFromStep: 0, funnelToStep: 1 }] }), 'query.funnelsFilter.exclusions.0'],
    [funnel({ series: [{ kind: 'ActionsNode', id: 999 }, { kind: 'EventsNode', event: 'x' }] }), 'query.series.0.id'],
  ]
  for (const [query, attr] of cases) {
    const r = await postQuery(app, query)
    assert.equal(r.statusCode, 400, `${attr}: ${r.body}`)
    assert.equal(r.json().attr, attr, r.body)
    assert.equal(r.json().type, 'validation_error')
  }
})

testOnEachEngine('funnel edges: one step, twenty steps of one event, strict with an exclusion, unordered by breakdown, no events', async (t, engine) => {
  const app = await seeded(t, engine)
  const one = await queryOk(app, { ...funnel(), series: [{ kind: 'EventsNode', event: 'view' }] })
  assert.deepEqual(one.results.map((s: any) => s.count), [[...eventsByPerson().values()].filter((evs) => evs.some((e) => e.event === 'view')).length])

  // The same event as every step: each event completes one step at most.
  const twenty = Array.from({ length: 20 }, () => 'view')
  const many = await queryOk(app, { ...funnel({}, { funnelWindowInterval: 30 }), series: twenty.map((event) => ({ kind: 'EventsNode', event })) })
  assertSteps(many.results, expectedSteps([...refAll({ steps: twenty, windowMs: 30 * DAY, order: 'ordered' }).values()], 20), '20 steps')

  const strictExcl = await queryOk(app, funnel({}, { funnelOrderType: 'strict', exclusions: [{ kind: 'EventsNode', event: 'refund', funnelFromStep: 0, funnelToStep: 2 }] }))
  const refStrict = refAll({ steps: STEPS, windowMs: 2 * DAY, order: 'strict', exclusions: [{ event: 'refund', from: 0, to: 2 }] })
  assertSteps(strictExcl.results, expectedSteps([...refStrict.values()], 3), 'strict with exclusion')

  const unorderedByBrowser = await queryOk(app, funnel({ breakdownFilter: { breakdown: '$browser' } }, { funnelOrderType: 'unordered' }))
  const total = unorderedByBrowser.results.reduce((sum: number, steps: any[]) => sum + steps[0].count, 0)
  assert.equal(total, refAll({ steps: STEPS, windowMs: 2 * DAY, order: 'unordered' }).size, 'every person under one breakdown value')

  const empty = await queryOk(app, { ...funnel(), dateRange: { date_from: '2020-01-01', date_to: '2020-01-31' } })
  assert.deepEqual(empty.results.map((s: any) => [s.count, s.average_conversion_time]), [[0, null], [0, null], [0, null]])
  const emptyTtc = await queryOk(app, { ...funnel({}, { funnelVizType: 'time_to_convert' }), dateRange: { date_from: '2020-01-01', date_to: '2020-01-31' } })
  assert.deepEqual(emptyTtc.results, { bins: [], average_conversion_time: null })
})
