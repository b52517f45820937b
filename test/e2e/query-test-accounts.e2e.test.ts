import assert from 'node:assert/strict'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { privateApi } from '../helpers/private-api.ts'
import { queryOk, seededApps, seededRandom, type TestEvent } from '../helpers/query-data.ts'
import type { TestApp } from '../helpers/test-app.ts'

// `filterTestAccounts: true` on every insight kind and its actors: the project's
// `test_account_filters` (here PostHog's two defaults: a person's email domain, and `$host` of a
// local dev server; and "not in cohort" of a QA cohort) take the matching events out of the query,
// as PostHog's `Properties.to_exprs` does. Every expected answer is computed here from the fixture (plain JS over the events), once
// with all events and once without the test accounts' ones, and the two differ.
const testAccountFilters = (qaCohort: number) => [
  { key: 'email', operator: 'not_icontains', value: '@internal.test', type: 'person' },
  { key: '$host', operator: 'not_regex', value: '^(localhost|127\\.0\\.0\\.1)($|:)', type: 'event' },
  { key: 'id', value: qaCohort, operator: 'not_in', type: 'cohort' },
]
const QA_EMAIL = 'p5@example.com'
const isTestEvent = (e: TestEvent) => {
  const email = (e.properties?.$set as { email?: string } | undefined)?.email?.toLowerCase()
  return (email !== undefined && (email.includes('@internal.test') || email === QA_EMAIL)) || /^(localhost|127\.0\.0\.1)($|:)/.test(String(e.properties?.$host))
}

// 24 persons over 2024-04-30 (before the range) .. 2024-05-07: a quarter with an internal email
// (mixed case), a quarter with an outside one, half without; a fifth of events from localhost.
const rand = seededRandom(2024)
const DAYS = ['2024-04-30', '2024-05-01', '2024-05-02', '2024-05-03', '2024-05-04', '2024-05-05', '2024-05-06', '2024-05-07']
const RANGE = DAYS.slice(1)
const dateRange = { date_from: RANGE[0], date_to: RANGE.at(-1) }
const events: TestEvent[] = []
for (let p = 0; p < 24; p++) {
  const email = p % 4 === 0 ? `p${p}@Internal.TEST` : p % 4 === 1 ? `p${p}@example.com` : undefined
  const props = () => ({ $host: rand() < 0.2 ? (rand() < 0.5 ? 'localhost:8000' : '127.0.0.1') : 'app.example.com', ...(email ? { $set: { email } } : {}) })
  for (const day of DAYS) {
    if (rand() < (day === DAYS[0] ? 0.3 : 0.55)) {
      const views = 1 + Math.floor(rand() * 3)
      for (let j = 0; j < views; j++) events.push({ event: '$pageview', distinct_id: `p${p}`, timestamp: `${day}T${String(8 + 2 * j).padStart(2, '0')}:${String(p).padStart(2, '0')}:00Z`, properties: props() })
    }
    if (rand() < 0.3) events.push({ event: 'signup', distinct_id: `p${p}`, timestamp: `${day}T${rand() < 0.5 ? '09' : '15'}:${String(p).padStart(2, '0')}:30Z`, properties: props() })
  }
}

const seeded = seededApps(events)
const configured = new Map<Engine, Promise<TestApp>>()
/** The seeded app of `engine` with the project's test-account filters set (once per engine). */
function appOf(engine: Engine): Promise<TestApp> {
  if (!configured.has(engine)) {
    configured.set(engine, (async () => {
      const app = seeded.app(engine)
      const api = privateApi(app)
      const qa = await api.post('/cohorts/', { name: 'QA', filters: { properties: { type: 'AND', values: [{ key: 'email', value: QA_EMAIL, operator: 'exact', type: 'person' }] } } })
      assert.equal(qa.statusCode, 201, qa.body)
      const res = await api.patch('/', { test_account_filters: testAccountFilters(qa.json().id) })
      assert.equal(res.statusCode, 200, res.body)
      return app
    })())
  }
  return configured.get(engine)!
}

/** The events a query reads: all of them, or without the test accounts' ones. */
const kept = (filter: boolean) => (filter ? events.filter((e) => !isTestEvent(e)) : events)
const dayOf = (e: TestEvent) => e.timestamp.slice(0, 10)
const inRange = (e: TestEvent) => RANGE.includes(dayOf(e))
const sorted = (xs: Iterable<string>) => [...xs].sort()
/** Per day of `DAYS`, the persons with a `$pageview` among `evs`. */
function activeByDay(evs: readonly TestEvent[]): Map<string, Set<string>> {
  const out = new Map(DAYS.map((d) => [d, new Set<string>()]))
  for (const e of evs) if (e.event === '$pageview') out.get(dayOf(e))!.add(e.distinct_id)
  return out
}

const pageviews = [{ kind: 'EventsNode', event: '$pageview' }]
const actors = async (app: TestApp, source: Record<string, unknown>): Promise<string[]> => {
  const body = await queryOk(app, { kind: 'ActorsQuery', source, select: ['actor'], limit: 1000 })
  return sorted(body.results.map((row: Array<{ distinct_ids: string[] }>) => row[0]!.distinct_ids[0]!))
}

/** Runs `check` with the flag off and on, and makes sure the fixture makes the two answers differ. */
async function offAndOn<T>(check: (filter: boolean) => Promise<T>): Promise<void> {
  const off = await check(false)
  const on = await check(true)
  assert.notDeepEqual(on, off, 'the test accounts change the answer')
}

testOnEachEngine('TrendsQuery and its actors: filterTestAccounts leaves out the test accounts\' events', async (_t, engine) => {
  const app = await appOf(engine)
  await offAndOn(async (filter) => {
    const body = await queryOk(app, { kind: 'TrendsQuery', series: pageviews, dateRange, interval: 'day', filterTestAccounts: filter })
    const expected = RANGE.map((d) => kept(filter).filter((e) => e.event === '$pageview' && dayOf(e) === d).length)
    assert.deepEqual(body.results[0].data, expected, `filterTestAccounts: ${filter}`)
    const who = await actors(app, { kind: 'InsightActorsQuery', day: '2024-05-03', source: { kind: 'TrendsQuery', series: pageviews, dateRange, interval: 'day', filterTestAccounts: filter } })
    assert.deepEqual(who, sorted(activeByDay(kept(filter)).get('2024-05-03')!), `actors, filterTestAccounts: ${filter}`)
    return [body.results[0].data, who]
  })
})

testOnEachEngine('FunnelsQuery and its actors: the test accounts\' events are not read at all, so they do not break a strict funnel either', async (_t, engine) => {
  const app = await appOf(engine)
  const funnel = (filter: boolean, order: string) => ({
    kind: 'FunnelsQuery', series: [...pageviews, { kind: 'EventsNode', event: 'signup' }], dateRange, filterTestAccounts: filter,
    funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day', funnelOrderType: order },
  })
  /** Per person, the events in the range in time order; converted when a signup follows a page view (strict: right after it). */
  function expected(filter: boolean, strict: boolean): { entered: string[]; converted: string[] } {
    const byPerson = new Map<string, TestEvent[]>()
    for (const e of kept(filter).filter(inRange)) byPerson.set(e.distinct_id, [...(byPerson.get(e.distinct_id) ?? []), e])
    const entered: string[] = []
    const converted: string[] = []
    for (const [p, evs] of byPerson) {
      const seq = evs.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp)).map((e) => e.event)
      const first = seq.indexOf('$pageview')
      if (first < 0) continue
      entered.push(p)
      if (strict ? seq.some((ev, i) => ev === '$pageview' && seq[i + 1] === 'signup') : seq.indexOf('signup', first) > first) converted.push(p)
    }
    return { entered: sorted(entered), converted: sorted(converted) }
  }
  for (const order of ['ordered', 'strict']) {
    await offAndOn(async (filter) => {
      const body = await queryOk(app, funnel(filter, order))
      const want = expected(filter, order === 'strict')
      assert.deepEqual(body.results.map((s: { count: number }) => s.count), [want.entered.length, want.converted.length], `${order}, filterTestAccounts: ${filter}`)
      const who = await actors(app, { kind: 'FunnelsActorsQuery', funnelStep: 2, source: funnel(filter, order) })
      assert.deepEqual(who, want.converted, `${order} actors, filterTestAccounts: ${filter}`)
      return who
    })
  }
})

testOnEachEngine('RetentionQuery and its actors: cohorts and returns count only the other accounts\' events', async (_t, engine) => {
  const app = await appOf(engine)
  const retention = (filter: boolean) => ({
    kind: 'RetentionQuery', dateRange, filterTestAccounts: filter,
    retentionFilter: { period: 'Day', totalIntervals: RANGE.length, retentionType: 'retention_recurring', targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } },
  })
  await offAndOn(async (filter) => {
    const body = await queryOk(app, retention(filter))
    const active = activeByDay(kept(filter))
    const expected = RANGE.map((d, i) => RANGE.map((_, k) => {
      const later = RANGE[i + k]
      return later === undefined ? 0 : [...active.get(d)!].filter((p) => active.get(later)!.has(p)).length
    }))
    assert.deepEqual(body.results.map((r: { values: Array<{ count: number }> }) => r.values.map((v) => v.count)), expected, `filterTestAccounts: ${filter}`)
    const who = await actors(app, { kind: 'InsightActorsQuery', interval: 1, source: retention(filter) })
    assert.deepEqual(who, sorted(active.get(RANGE[1]!)!), `actors, filterTestAccounts: ${filter}`)
    return expected
  })
})

testOnEachEngine('StickinessQuery and its actors: days active count only the other accounts\' events', async (_t, engine) => {
  const app = await appOf(engine)
  const stickiness = (filter: boolean) => ({ kind: 'StickinessQuery', series: pageviews, dateRange, interval: 'day', filterTestAccounts: filter })
  await offAndOn(async (filter) => {
    const daysActive = new Map<string, number>()
    for (const people of [...activeByDay(kept(filter))].filter(([d]) => RANGE.includes(d)).map(([, s]) => s)) {
      for (const p of people) daysActive.set(p, (daysActive.get(p) ?? 0) + 1)
    }
    const body = await queryOk(app, stickiness(filter))
    assert.deepEqual(body.results[0].data, RANGE.map((_, i) => [...daysActive.values()].filter((n) => n === i + 1).length), `filterTestAccounts: ${filter}`)
    const who = await actors(app, { kind: 'InsightActorsQuery', day: 3, source: stickiness(filter) })
    assert.deepEqual(who, sorted([...daysActive].filter(([, n]) => n === 3).map(([p]) => p)), `actors, filterTestAccounts: ${filter}`)
    return body.results[0].data
  })
})

testOnEachEngine('LifecycleQuery and its actors: statuses from the other accounts\' events (first seen is still the person\'s first event)', async (_t, engine) => {
  const app = await appOf(engine)
  const lifecycle = (filter: boolean) => ({ kind: 'LifecycleQuery', series: pageviews, dateRange, interval: 'day', filterTestAccounts: filter })
  // Tally's "new": active in the day of the person's first event of any kind (docs/queries.md).
  const firstSeen = new Map<string, string>()
  for (const e of [...events].sort((a, b) => a.timestamp.localeCompare(b.timestamp))) if (!firstSeen.has(e.distinct_id)) firstSeen.set(e.distinct_id, dayOf(e))
  await offAndOn(async (filter) => {
    const active = activeByDay(kept(filter))
    const status = { new: [] as string[][], returning: [] as string[][], resurrecting: [] as string[][], dormant: [] as string[][] }
    for (const [i, d] of RANGE.entries()) {
      const now = active.get(d)!
      const before = active.get(DAYS[i]!)!
      status.new.push([...now].filter((p) => firstSeen.get(p) === d))
      status.returning.push([...now].filter((p) => firstSeen.get(p) !== d && before.has(p)))
      status.resurrecting.push([...now].filter((p) => firstSeen.get(p) !== d && !before.has(p)))
      status.dormant.push([...before].filter((p) => !now.has(p)))
    }
    const body = await queryOk(app, lifecycle(filter))
    for (const r of body.results as Array<{ status: keyof typeof status; data: number[] }>) {
      assert.deepEqual(r.data, status[r.status].map((ps) => (r.status === 'dormant' ? -ps.length : ps.length)), `${r.status}, filterTestAccounts: ${filter}`)
    }
    const who = await actors(app, { kind: 'InsightActorsQuery', day: '2024-05-04', status: 'returning', source: lifecycle(filter) })
    assert.deepEqual(who, sorted(status.returning[3]!), `returning actors, filterTestAccounts: ${filter}`)
    return body.results.map((r: { data: number[] }) => r.data)
  })
})
