import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { funnelQuery, captureEvents, postQuery, queryOk, seededRandom, type TestEvent } from '../helpers/query-data.ts'
import { refFunnel, type Ev } from '../helpers/funnel-reference.ts'

// The persons behind an insight's number (ActorsQuery), each set checked against the persons this
// file computes from the seeded events: the funnel reference matcher for funnel steps, plain
// filters over the events for trends and stickiness.
const rand = seededRandom(7)
const DAY = 86_400_000
const BASE = Date.parse('2024-03-01T00:00:00Z')
const STEPS = ['view', 'cart', 'buy']
const BROWSERS = ['Chrome', 'Firefox', 'Safari']
const events: TestEvent[] = []
const personOf = (id: string) => id.replace(/^anon-/, 'user-')
for (let p = 0; p < 40; p++) {
  const count = 3 + Math.floor(rand() * 8)
  const browser = BROWSERS[Math.floor(rand() * BROWSERS.length)]!
  const times = new Set<number>()
  while (times.size < count) times.add(BASE + Math.floor(rand() * 10 * 86_400) * 1000)
  for (const t of [...times].sort((a, b) => a - b)) {
    const r = rand()
    const event = r < 0.35 ? 'view' : r < 0.6 ? 'cart' : r < 0.8 ? 'buy' : 'noise'
    // Persons 0-5 browse anonymously for their first days, then identify.
    const distinctId = p < 6 && t < BASE + 3 * DAY ? `anon-${p}` : `user-${p}`
    events.push({ event, distinct_id: distinctId, timestamp: new Date(t).toISOString(), properties: { $browser: browser, $set: { email: `u${p}@example.com` } } })
  }
}
for (let p = 0; p < 6; p++) events.push({ event: '$identify', distinct_id: `user-${p}`, timestamp: new Date(BASE + 3 * DAY + p * 1000).toISOString(), properties: { $anon_distinct_id: `anon-${p}` } })

const dateRange = { date_from: '2024-03-01', date_to: '2024-03-10' }
const funnel = (extra: Record<string, unknown> = {}, filter: Record<string, unknown> = {}) => funnelQuery(STEPS, dateRange, extra, filter)
const trends = (series: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', ...series }], dateRange, interval: 'day', ...extra })

function byPerson(): Map<string, Ev[]> {
  const out = new Map<string, Ev[]>()
  for (const e of events) {
    const list = out.get(personOf(e.distinct_id)) ?? []
    list.push({ t: Date.parse(e.timestamp), event: e.event, browser: String(e.properties?.$browser) })
    out.set(personOf(e.distinct_id), list)
  }
  for (const list of out.values()) list.sort((a, b) => a.t - b.t)
  return out
}

async function seeded(t: Parameters<typeof buildTestApp>[0], engine: Engine): Promise<TestApp> {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, events)
  return app
}

const actors = (source: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ kind: 'ActorsQuery', source, select: ['actor'], limit: 1000, ...extra })
/** The `user-N` distinct id of each returned person (every seeded person has one). */
const userIds = (res: Record<string, any>) => res.results.map((row: any[]) => row[0].distinct_ids.find((d: string) => d.startsWith('user-'))).sort()
const sorted = (xs: Iterable<string>) => [...xs].sort()

testOnEachEngine('funnel actors: who reached a step and who dropped off before it are the reference matcher\'s persons', async (t, engine) => {
  const app = await seeded(t, engine)
  const ref = new Map([...byPerson()].flatMap(([p, evs]) => {
    const r = refFunnel(evs, { steps: STEPS, windowMs: 2 * DAY, order: 'ordered' })
    return r ? [[p, r.level] as const] : []
  }))
  for (const step of [1, 2, 3]) {
    const res = await queryOk(app, actors({ kind: 'FunnelsActorsQuery', source: funnel(), funnelStep: step }))
    assert.deepEqual(userIds(res), sorted([...ref].filter(([, l]) => l >= step - 1).map(([p]) => p)), `reached step ${step}`)
    assert.equal(res.missing_actors_count, 0)
  }
  for (const step of [-2, -3]) {
    const res = await queryOk(app, actors({ kind: 'FunnelsActorsQuery', source: funnel(), funnelStep: step }))
    const expected = sorted([...ref].filter(([, l]) => l === -step - 2).map(([p]) => p))
    assert.ok(expected.length > 0, 'someone drops off')
    assert.deepEqual(userIds(res), expected, `dropped off before step ${-step}`)
  }
  // The step counts of the funnel itself are the lists' lengths.
  const steps = (await queryOk(app, funnel())).results
  assert.deepEqual(steps.map((s: any) => s.count), [1, 2, 3].map((k) => [...ref.values()].filter((l) => l >= k - 1).length))
  assert.equal(steps[1].converted_people_url, null)
})

testOnEachEngine('funnel actors of one breakdown value: the persons whose first step event carried it', async (t, engine) => {
  const app = await seeded(t, engine)
  const evs = byPerson()
  const source = funnel({ breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } })
  for (const browser of BROWSERS) {
    const expected = sorted([...evs].filter(([, list]) => {
      const r = refFunnel(list, { steps: STEPS, windowMs: 2 * DAY, order: 'ordered' })
      return r && r.level >= 1 && list.find((e) => e.event === 'view')!.browser === browser
    }).map(([p]) => p))
    const res = await queryOk(app, actors({ kind: 'FunnelsActorsQuery', source, funnelStep: 2, funnelStepBreakdown: [browser] }))
    assert.deepEqual(userIds(res), expected, browser)
  }
})

testOnEachEngine('funnel trends actors: converted and dropped-off entrants of one day add up to the chart\'s counts', async (t, engine) => {
  const app = await seeded(t, engine)
  const source = funnel({ interval: 'day' }, { funnelVizType: 'trends' })
  const [series] = (await queryOk(app, source)).results
  const i = series.reached_from_step_count.findIndex((n: number) => n > 0 && n > series.reached_to_step_count[series.reached_from_step_count.indexOf(n)])
  assert.ok(i >= 0)
  const start = BASE + i * DAY
  const expectedConverted: string[] = []
  const expectedDropped: string[] = []
  for (const [p, list] of byPerson()) {
    const r = refFunnel(list.filter((e) => e.t >= start), { steps: STEPS, windowMs: 2 * DAY, order: 'ordered', entryFilter: (e) => e.t < start + DAY })
    if (r) (r.level === 2 ? expectedConverted : expectedDropped).push(p)
  }
  const day = series.days[i]
  const converted = await queryOk(app, actors({ kind: 'FunnelsActorsQuery', source, funnelTrendsEntrancePeriodStart: day, funnelTrendsDropOff: false }))
  const dropped = await queryOk(app, actors({ kind: 'FunnelsActorsQuery', source, funnelTrendsEntrancePeriodStart: day, funnelTrendsDropOff: true }))
  assert.deepEqual(userIds(converted), sorted(expectedConverted))
  assert.deepEqual(userIds(dropped), sorted(expectedDropped))
  assert.equal(converted.results.length, series.reached_to_step_count[i])
  assert.equal(dropped.results.length, series.reached_from_step_count[i] - series.reached_to_step_count[i])
})

testOnEachEngine('a person merged by $identify appears once, with both distinct ids and the events of both', async (t, engine) => {
  const app = await seeded(t, engine)
  const res = await queryOk(app, actors({ kind: 'InsightActorsQuery', source: trends({ event: null, math: 'dau' }, { trendsFilter: { display: 'ActionsTable' } }) }, { select: ['actor', 'event_count', 'event_distinct_ids'] }))
  // A person with events under both ids.
  const p = [0, 1, 2, 3, 4, 5].find((i) => events.some((e) => e.distinct_id === `anon-${i}`))!
  const merged = res.results.filter((row: any[]) => row[0].distinct_ids.includes(`user-${p}`))
  assert.equal(merged.length, 1)
  assert.deepEqual(sorted(merged[0][0].distinct_ids), [`anon-${p}`, `user-${p}`])
  assert.deepEqual(sorted(merged[0][2]), [`anon-${p}`, `user-${p}`])
  assert.equal(merged[0][1], events.filter((e) => personOf(e.distinct_id) === `user-${p}`).length)
  assert.equal(merged[0][0].properties.email, `u${p}@example.com`)
  assert.equal(merged[0][0].is_identified, true)
  assert.equal(new Set(res.results.map((row: any[]) => row[0].id)).size, res.results.length, 'each person once')
})

testOnEachEngine('trends actors: the persons with the series\' events on the day, by breakdown value, and over the weekly window', async (t, engine) => {
  const app = await seeded(t, engine)
  const day = '2024-03-05'
  const from = Date.parse(`${day}T00:00:00Z`)
  const inWindow = (e: TestEvent, start: number, browser?: string) => e.event === 'view' && Date.parse(e.timestamp) >= start && Date.parse(e.timestamp) < from + DAY && (!browser || e.properties?.$browser === browser)
  const expect = (start: number, browser?: string) => {
    const counts = new Map<string, number>()
    for (const e of events) if (inWindow(e, start, browser)) counts.set(personOf(e.distinct_id), (counts.get(personOf(e.distinct_id)) ?? 0) + 1)
    return counts
  }
  const dau = await queryOk(app, actors({ kind: 'InsightActorsQuery', source: trends({ event: 'view', math: 'dau' }), day }, { select: ['actor', 'event_count'] }))
  const expected = expect(from)
  assert.deepEqual(userIds(dau), sorted(expected.keys()))
  for (const row of dau.results) assert.equal(row[1], expected.get(row[0].distinct_ids.find((d: string) => d.startsWith('user-'))))
  const chart = await queryOk(app, trends({ event: 'view', math: 'dau' }))
  assert.equal(dau.results.length, chart.results[0].data[4])

  const byBrowser = await queryOk(app, actors({ kind: 'InsightActorsQuery', source: trends({ event: 'view' }, { breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } }), day, breakdown: 'Safari' }))
  assert.deepEqual(userIds(byBrowser), sorted(expect(from, 'Safari').keys()))

  const weekly = await queryOk(app, actors({ kind: 'InsightActorsQuery', source: trends({ event: 'view', math: 'weekly_active' }), day }))
  assert.deepEqual(userIds(weekly), sorted(expect(from - 6 * DAY).keys()))
})

testOnEachEngine('stickiness actors: the persons active on exactly `day` days of the range', async (t, engine) => {
  const app = await seeded(t, engine)
  const days = new Map<string, Set<string>>()
  for (const e of events) if (e.event === 'view') days.set(personOf(e.distinct_id), (days.get(personOf(e.distinct_id)) ?? new Set()).add(e.timestamp.slice(0, 10)))
  const source = { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: 'view' }], dateRange, interval: 'day' }
  const res = await queryOk(app, actors({ kind: 'InsightActorsQuery', source, day: 2 }))
  const expected = sorted([...days].filter(([, d]) => d.size === 2).map(([p]) => p))
  assert.ok(expected.length > 0)
  assert.deepEqual(userIds(res), expected)
})

testOnEachEngine('lifecycle actors: the persons new, returning, resurrecting or dormant on the day', async (t, engine) => {
  const app = await seeded(t, engine)
  const dayOf = (e: TestEvent) => Math.floor((Date.parse(e.timestamp) - BASE) / DAY)
  const active = new Map<string, Set<number>>()
  const first = new Map<string, number>()
  for (const e of events) {
    const p = personOf(e.distinct_id)
    first.set(p, Math.min(first.get(p) ?? Infinity, dayOf(e)))
    if (e.event === 'view') active.set(p, (active.get(p) ?? new Set()).add(dayOf(e)))
  }
  const statusOn = (p: string, d: number): string | null => {
    const a = active.get(p) ?? new Set()
    if (a.has(d)) return first.get(p) === d ? 'new' : a.has(d - 1) ? 'returning' : 'resurrecting'
    return a.has(d - 1) ? 'dormant' : null
  }
  const source = { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: 'view' }], dateRange, interval: 'day' }
  const chart = await queryOk(app, source)
  for (const d of [1, 4, 6]) {
    for (const status of ['new', 'returning', 'resurrecting', 'dormant']) {
      const day = new Date(BASE + d * DAY).toISOString().slice(0, 10)
      const res = await queryOk(app, actors({ kind: 'InsightActorsQuery', source, day, status }))
      const expected = sorted([...first.keys()].filter((p) => statusOn(p, d) === status))
      assert.deepEqual(userIds(res), expected, `${status} on ${day}`)
      assert.equal(res.results.length, Math.abs(chart.results.find((r: any) => r.status === status).data[d]))
    }
  }
})

testOnEachEngine('pages: limit, offset and hasMore walk the whole list once, in event count order', async (t, engine) => {
  const app = await seeded(t, engine)
  const source = { kind: 'InsightActorsQuery', source: trends({ event: null }, { trendsFilter: { display: 'BoldNumber' } }) }
  const all = await queryOk(app, actors(source, { select: ['actor', 'event_count'], orderBy: ['event_count DESC, actor_id DESC'] }))
  assert.equal(all.results.length, 40)
  const counts = all.results.map((r: any[]) => r[1])
  assert.deepEqual(counts, [...counts].sort((a: number, b: number) => b - a))
  const seen: string[] = []
  for (let offset = 0; ; offset += 15) {
    const page = await queryOk(app, actors(source, { select: ['actor', 'event_count'], orderBy: ['event_count DESC, actor_id DESC'], limit: 15, offset }))
    assert.equal(page.limit, 15)
    assert.equal(page.offset, offset)
    seen.push(...page.results.map((r: any[]) => r[0].id))
    assert.equal(page.hasMore, offset + 15 < 40)
    if (!page.hasMore) break
  }
  assert.deepEqual(seen, all.results.map((r: any[]) => r[0].id))
  // The default page is 100 rows; search narrows by email or distinct id.
  const found = await queryOk(app, { kind: 'ActorsQuery', source, search: 'U12@EXAMPLE' })
  assert.deepEqual(found.columns, ['person', 'id', 'person.$delete', 'event_distinct_ids'])
  assert.equal(found.limit, 100)
  assert.deepEqual(found.results.map((r: any[]) => r[0].distinct_ids), [['user-12']])
  const byCreated = await queryOk(app, actors(source, { select: ['actor', 'created_at'], limit: 10 }))
  const created = byCreated.results.map((r: any[]) => r[1])
  assert.deepEqual(created, [...created].sort().reverse())
  assert.equal(byCreated.hasMore, true)
})

testOnEachEngine('refusals name the field: unsupported sources, a missing step or day, unknown columns', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const cases: Array<[unknown, string]> = [
    [actors({ kind: 'InsightActorsQuery', source: { kind: 'WebOverviewQuery', dateRange: {}, properties: [] } }), 'query.source.source.kind'],
    [actors({ kind: 'InsightActorsQuery', source: { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: 'view' }] }, status: 'gone' }), 'query.source.status'],
    [actors({ kind: 'FunnelsActorsQuery', source: funnel() }), 'query.source.funnelStep'],
    [actors({ kind: 'FunnelsActorsQuery', source: funnel(), funnelStep: 0 }), 'query.source.funnelStep'],
    [actors({ kind: 'FunnelsActorsQuery', source: funnel(), funnelStep: -1 }), 'query.source.funnelStep'],
    [actors({ kind: 'FunnelsActorsQuery', source: funnel() , funnelStep: 1 }, { select: ['actor', 'event_count'] }), 'query.select.1'],
    [actors({ kind: 'FunnelsActorsQuery', source: funnel({}, { funnelVizType: 'trends' }), funnelTrendsEntrancePeriodStart: '2024-03-02' }), 'query.source.funnelTrendsDropOff'],
    [actors({ kind: 'InsightActorsQuery', source: trends({ event: 'view' }) }), 'query.source.day'],
    [actors({ kind: 'InsightActorsQuery', source: trends({ event: 'view' }), day: '2024-03-02', series: 3 }), 'query.source.series'],
    [actors({ kind: 'InsightActorsQuery', source: trends({ event: 'view' }), day: '2024-03-02' }, { select: ['actor', 'properties.$browser'] }), 'query.select.1'],
    [actors({ kind: 'InsightActorsQuery', source: trends({ event: 'view' }), day: '2024-03-02' }, { orderBy: ['uniq(distinct_id)'] }), 'query.orderBy.0'],
    [actors({ kind: 'InsightActorsQuery', source: trends({ event: 'view' }), day: '2024-03-02' }, { limit: 0 }), 'query.limit'],
    [actors({ kind: 'PathsActorsQuery', source: {} }), 'query.source.kind'],
  ]
  for (const [query, attr] of cases) {
    const res = await postQuery(app, query)
    assert.equal(res.statusCode, 400, `${attr}: ${res.body}`)
    assert.equal(res.json().attr, attr, res.body)
    assert.equal(res.json().type, 'validation_error')
  }
})
