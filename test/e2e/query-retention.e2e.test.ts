import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { testOnEachEngine } from '../helpers/engines.ts'
import { privateApi } from '../helpers/private-api.ts'
import { captureEvents, postQuery, queryOk, seededRandom, type TestEvent, seededApps } from '../helpers/query-data.ts'

// Expected grids are computed here from the fixture list: per actor, the set of range periods they
// entered a cohort in and the set they came back in (plain JS over the events, never SQL).

interface GridSpec {
  /** Period keys of the range, in order (the test's own calendar arithmetic). */
  periods: string[]
  periodOf: (e: TestEvent) => string
  target: (e: TestEvent) => boolean
  returning: (e: TestEvent) => boolean
  mode?: 'recurring' | 'first_time' | 'first_ever'
  /** first_ever: the target without its entity filters. */
  targetAny?: (e: TestEvent) => boolean
  /** Query-level filters: events failing them do not exist for the query. */
  keep?: (e: TestEvent) => boolean
  actorOf?: (e: TestEvent) => string | null
  totalIntervals: number
  cumulative?: boolean
}

const personOf = (e: TestEvent) => e.distinct_id.replace(/^anon-/, 'user-')

function expectedGrid(events: readonly TestEvent[], s: GridSpec): number[][] {
  const index = new Map(s.periods.map((p, i) => [p, i]))
  const end = s.periods.length
  const evs = [...events].filter(s.keep ?? (() => true)).sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp))
  const actors = new Map<string, { cohorts: Set<number>; returns: Set<number>; first?: TestEvent; firstAny?: TestEvent }>()
  for (const e of evs) {
    const id = (s.actorOf ?? personOf)(e)
    if (id === null) continue
    const a = actors.get(id) ?? { cohorts: new Set(), returns: new Set() }
    actors.set(id, a)
    const i = index.get(s.periodOf(e))
    if (s.target(e) && a.first === undefined) a.first = e
    if (s.targetAny?.(e) && a.firstAny === undefined) a.firstAny = e
    if (i === undefined) continue
    if (s.mode === undefined || s.mode === 'recurring') if (s.target(e)) a.cohorts.add(i)
    if (s.returning(e)) a.returns.add(i)
  }
  for (const a of actors.values()) {
    const first = s.mode === 'first_time' ? a.first : s.mode === 'first_ever' ? (a.firstAny && s.target(a.firstAny) ? a.firstAny : undefined) : undefined
    const i = first ? index.get(s.periodOf(first)) : undefined
    if (i !== undefined) a.cohorts.add(i)
  }
  return s.periods.map((_, c) =>
    Array.from({ length: s.totalIntervals }, (_, k) => {
      if (k > 0 && (c + k >= end || k >= s.totalIntervals)) return 0
      let n = 0
      for (const a of actors.values()) {
        if (!a.cohorts.has(c)) continue
        if (k === 0) n++
        else if (s.cumulative ? [...a.returns].some((r) => r >= c + k && r < c + s.totalIntervals) : a.returns.has(c + k)) n++
      }
      return n
    }),
  )
}

const counts = (body: Record<string, any>) => body.results.map((r: { values: Array<{ count: number }> }) => r.values.map((v) => v.count))
const pad2 = (n: number) => String(n).padStart(2, '0')
const utcDay = (e: TestEvent) => e.timestamp.slice(0, 10)
const dayList = (from: string, days: number) => Array.from({ length: days }, (_, i) => new Date(Date.parse(`${from}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10))
const retention = (filter: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ kind: 'RetentionQuery', retentionFilter: filter, ...extra })
const ev = (id: string) => ({ id, type: 'events', name: id })

// Data set 1: 30 persons over 2024-05-28..2024-06-14 (days), persons 0-4 anonymous until they
// identify on 2024-06-04, persons below 20 in one of four companies.
const rand = seededRandom(11)
const DAYS = dayList('2024-05-28', 18)
const grid: TestEvent[] = []
for (const [d, day] of DAYS.entries()) {
  for (let p = 0; p < 30; p++) {
    const distinctId = p < 5 && day < '2024-06-04' ? `anon-${p}` : `user-${p}`
    const groups = p < 20 ? { $groups: { company: `c${p % 4}` } } : {}
    if (rand() < 0.4) {
      const browser = rand() < 0.5 ? 'Chrome' : 'Firefox'
      grid.push({ event: 'play', distinct_id: distinctId, timestamp: `${day}T${pad2(p % 24)}:10:00Z`, properties: { $browser: browser, ...groups } })
    }
    if (rand() < 0.1 + (d === 0 ? 0.3 : 0)) grid.push({ event: 'signup', distinct_id: distinctId, timestamp: `${day}T${pad2(p % 24)}:20:00Z`, properties: { ...groups } })
  }
}
for (let p = 0; p < 5; p++) grid.push({ event: '$identify', distinct_id: `user-${p}`, timestamp: '2024-06-04T23:00:00Z', properties: { $anon_distinct_id: `anon-${p}` } })

// Data set 2 (weeks and months): 20 other persons over 2024-01-01..2024-04-30.
const slow: TestEvent[] = []
for (const day of dayList('2024-01-01', 121)) {
  for (let p = 0; p < 20; p++) if (rand() < 0.06) slow.push({ event: 'open', distinct_id: `w-${p}`, timestamp: `${day}T${pad2((p * 5) % 24)}:30:00Z` })
}
// After date_to (Friday 1 March) but in its week: PostHog's range reaches the end of that week.
for (let p = 0; p < 6; p++) slow.push({ event: 'open', distinct_id: `w-${p}`, timestamp: `2024-03-02T1${p}:00:00Z` })

const RANGE = dayList('2024-06-05', 7)
const dateRange = { date_from: RANGE[0], date_to: RANGE[6] }
const play = (e: TestEvent) => e.event === 'play'
const daily = { periods: RANGE, periodOf: utcDay }

// One app and data set for the file (loading it is the slow part); closed after the last test.
let app: TestApp
const seeded = seededApps([...grid, ...slow])

testOnEachEngine('day grid across the range boundary: recurring vs first time, persons merged by $identify counted once', async (_t, engine) => {
  app = seeded.app(engine)
  const recurring = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange }))
  const expectedRecurring = expectedGrid(grid, { ...daily, target: play, returning: play, totalIntervals: 5 })
  assert.deepEqual(counts(recurring), expectedRecurring)
  assert.equal(recurring.results.length, 7)
  assert.deepEqual(recurring.results.map((r: { label: string }) => r.label), RANGE.map((_, i) => `Day ${i}`))
  assert.deepEqual(recurring.results.map((r: { date: string }) => r.date), RANGE.map((d) => `${d}T00:00:00Z`))
  assert.deepEqual(recurring.results[0].values.map((v: { label: string }) => v.label), ['Day 0', 'Day 1', 'Day 2', 'Day 3', 'Day 4'])
  assert.deepEqual(recurring.results[6].values.slice(1).map((v: { count: number }) => v.count), [0, 0, 0, 0], 'periods after the range count 0')

  // Only date_to: the start is totalIntervals periods back from the end of its period.
  const backwards = await queryOk(app, retention({ period: 'Day', totalIntervals: 7, targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange: { date_to: RANGE[6] } }))
  assert.deepEqual(backwards.results.map((r: { date: string }) => r.date), RANGE.map((d) => `${d}T00:00:00Z`))
  assert.deepEqual(counts(backwards), expectedGrid(grid, { ...daily, target: play, returning: play, totalIntervals: 7 }))

  const firstTime = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, retentionType: 'retention_first_time', targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange }))
  const expectedFirst = expectedGrid(grid, { ...daily, target: play, returning: play, mode: 'first_time', totalIntervals: 5 })
  assert.deepEqual(counts(firstTime), expectedFirst)
  assert.notDeepEqual(expectedFirst, expectedRecurring, 'the data set tells first time from recurring')
  assert.ok(expectedFirst[0]![0]! < expectedRecurring[0]![0]!, 'persons first seen before the range are in no cohort of it')

  // A merged person counts once: anon-0 and user-0 are one person (what a per-distinct-id count would not give).
  const byDistinctId = expectedGrid(grid, { ...daily, target: play, returning: play, totalIntervals: 5, actorOf: (e) => e.distinct_id })
  const wholeRange = expectedGrid(grid, { periods: dayList('2024-05-28', 14), periodOf: utcDay, target: play, returning: play, mode: 'first_time', totalIntervals: 14 })
  const wide = await queryOk(app, retention({ period: 'Day', totalIntervals: 14, retentionType: 'retention_first_time', targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange: { date_from: '2024-05-28', date_to: '2024-06-10' } }))
  assert.deepEqual(counts(wide), wholeRange)
  assert.notDeepEqual(expectedGrid(grid, { periods: dayList('2024-05-28', 14), periodOf: utcDay, target: play, returning: play, mode: 'first_time', totalIntervals: 14, actorOf: (e) => e.distinct_id }), wholeRange, 'merges change the answer')
  assert.ok(byDistinctId.length === 7)

  // Signup as the cohort event, PostHog's default of 8 values per row.
  const signup = await queryOk(app, retention({ retentionType: 'retention_first_time', targetEntity: ev('signup'), returningEntity: ev('play') }, { dateRange }))
  assert.deepEqual(counts(signup), expectedGrid(grid, { ...daily, target: (e) => e.event === 'signup', returning: play, mode: 'first_time', totalIntervals: 8 }))
  assert.equal(signup.results[0].values.length, 8)

  const cumulative = await queryOk(app, retention({ period: 'Day', totalIntervals: 4, cumulative: true, targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange }))
  assert.deepEqual(counts(cumulative), expectedGrid(grid, { ...daily, target: play, returning: play, totalIntervals: 4, cumulative: true }))
})

testOnEachEngine('actions, property filters (event, entity, cohort), first-ever occurrence and groups', async (_t, engine) => {
  app = seeded.app(engine)
  const api = privateApi(app)
  const action = await api.post('/actions/', { name: 'Engaged', steps: [{ event: 'play' }, { event: 'signup' }] })
  assert.equal(action.statusCode, 201, action.body)
  const engaged = (e: TestEvent) => e.event === 'play' || e.event === 'signup'
  const byAction = await queryOk(app, retention({ period: 'Day', totalIntervals: 4, targetEntity: { id: action.json().id, type: 'actions', name: 'Engaged' }, returningEntity: ev('play') }, { dateRange }))
  assert.deepEqual(counts(byAction), expectedGrid(grid, { ...daily, target: engaged, returning: play, totalIntervals: 4 }))
  const asText = await queryOk(app, retention({ period: 'Day', totalIntervals: 4, targetEntity: { id: String(action.json().id), type: 'actions' }, returningEntity: ev('play') }, { dateRange }))
  assert.deepEqual(counts(asText), counts(byAction))

  const chrome = (e: TestEvent) => e.properties?.$browser === 'Chrome'
  const filtered = await queryOk(app, retention(
    { period: 'Day', totalIntervals: 5, retentionType: 'retention_first_time', targetEntity: ev('play'), returningEntity: ev('play') },
    { dateRange, properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] },
  ))
  assert.deepEqual(counts(filtered), expectedGrid(grid, { ...daily, target: play, returning: play, mode: 'first_time', totalIntervals: 5, keep: chrome }))

  // Entity filters on the target only; first-ever occurrence: the first play ever must be a Chrome one.
  const chromePlay = { ...ev('play'), properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] }
  const firstTimeChrome = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, retentionType: 'retention_first_time', targetEntity: chromePlay, returningEntity: ev('play') }, { dateRange }))
  const expectedFirstChrome = expectedGrid(grid, { ...daily, target: (e) => play(e) && chrome(e), returning: play, mode: 'first_time', totalIntervals: 5 })
  assert.deepEqual(counts(firstTimeChrome), expectedFirstChrome)
  const firstEver = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, retentionType: 'retention_first_ever_occurrence', targetEntity: chromePlay, returningEntity: ev('play') }, { dateRange }))
  const expectedFirstEver = expectedGrid(grid, { ...daily, target: (e) => play(e) && chrome(e), targetAny: play, returning: play, mode: 'first_ever', totalIntervals: 5 })
  assert.deepEqual(counts(firstEver), expectedFirstEver)
  assert.notDeepEqual(expectedFirstEver, expectedFirstChrome, 'the data set tells first-ever from first matching')

  const cohort = await api.post('/cohorts/', { name: 'Three', is_static: true, distinct_ids: ['user-0', 'user-7', 'user-12', 'user-21'] })
  assert.equal(cohort.statusCode, 201, cohort.body)
  const members = new Set(['user-0', 'user-7', 'user-12', 'user-21'])
  const inCohort = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange, properties: [{ key: 'id', value: cohort.json().id, type: 'cohort' }] }))
  assert.deepEqual(counts(inCohort), expectedGrid(grid, { ...daily, target: play, returning: play, totalIntervals: 5, keep: (e) => members.has(personOf(e)) }))

  const companyOf = (e: TestEvent) => ((e.properties?.$groups as { company?: string } | undefined)?.company ?? null)
  const byCompany = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange, aggregation_group_type_index: 0 }))
  assert.deepEqual(counts(byCompany), expectedGrid(grid, { ...daily, target: play, returning: play, totalIntervals: 5, actorOf: companyOf }))
})

testOnEachEngine('weeks (Sunday start, the end stretched to the end of its week) and months', async (_t, engine) => {
  app = seeded.app(engine)
  const open = (e: TestEvent) => e.event === 'open'
  const weekOf = (e: TestEvent) => {
    const d = new Date(`${e.timestamp.slice(0, 10)}T00:00:00Z`)
    return new Date(d.getTime() - d.getUTCDay() * 86_400_000).toISOString().slice(0, 10)
  }
  // 2024-01-10 is a Wednesday (its week starts on Sunday 7 January); 2024-03-01 a Friday (week ends Saturday 2 March).
  const weeks = Array.from({ length: 8 }, (_, i) => new Date(Date.parse('2024-01-07T00:00:00Z') + i * 7 * 86_400_000).toISOString().slice(0, 10))
  const weekly = await queryOk(app, retention({ period: 'Week', totalIntervals: 6, targetEntity: ev('open'), returningEntity: ev('open') }, { dateRange: { date_from: '2024-01-10', date_to: '2024-03-01' } }))
  assert.deepEqual(weekly.results.map((r: { date: string }) => r.date), weeks.map((w) => `${w}T00:00:00Z`))
  assert.deepEqual(weekly.results.map((r: { label: string }) => r.label), weeks.map((_, i) => `Week ${i}`))
  assert.deepEqual(counts(weekly), expectedGrid(slow, { periods: weeks, periodOf: weekOf, target: open, returning: open, totalIntervals: 6 }))
  assert.ok(slow.some((e) => e.timestamp >= '2024-03-02' && e.timestamp < '2024-03-03'), 'the data set has events in the stretched end')

  const months = ['2024-01', '2024-02', '2024-03', '2024-04']
  const monthly = await queryOk(app, retention({ period: 'Month', totalIntervals: 3, retentionType: 'retention_first_time', targetEntity: ev('open'), returningEntity: ev('open') }, { dateRange: { date_from: '2024-01-15', date_to: '2024-04-10' } }))
  assert.deepEqual(monthly.results.map((r: { date: string }) => r.date), months.map((m) => `${m}-01T00:00:00Z`))
  assert.deepEqual(counts(monthly), expectedGrid(slow, { periods: months, periodOf: (e) => e.timestamp.slice(0, 7), target: open, returning: open, mode: 'first_time', totalIntervals: 3 }))
  assert.deepEqual(monthly.results[0].values.map((v: { label: string }) => v.label), ['Month 0', 'Month 1', 'Month 2'])

  // Without a date range: the last totalIntervals periods up to now.
  const recent = await queryOk(app, retention({ period: 'Day', totalIntervals: 3, targetEntity: ev('open'), returningEntity: ev('open') }))
  assert.equal(recent.results.length, 3)
  assert.equal(recent.results[2].date, `${new Date().toISOString().slice(0, 10)}T00:00:00Z`)
})

testOnEachEngine('project timezone across a DST change: periods are local days and hours (America/New_York, 10 March 2024)', async (t, engine) => {
  const zoned = await buildTestApp(t, { engine, env: { TALLY_LOG_LEVEL: 'silent' } })
  const ZONE = 'America/New_York'
  assert.equal((await privateApi(zoned).patch('/', { timezone: ZONE })).statusCode, 200)
  const r = seededRandom(5)
  const events: TestEvent[] = []
  // Every 25 minutes from 2024-03-07 00:00Z for 6 days: events fall on both sides of each local midnight.
  for (let t0 = Date.parse('2024-03-07T00:00:00Z'); t0 < Date.parse('2024-03-13T00:00:00Z'); t0 += 25 * 60_000) {
    if (r() < 0.25) events.push({ event: 'tick', distinct_id: `z${Math.floor(r() * 8)}`, timestamp: new Date(t0).toISOString() })
  }
  // Denser around the spring-forward night (local 02:00 does not exist) for hourly periods.
  for (let t0 = Date.parse('2024-03-10T04:00:00Z'); t0 < Date.parse('2024-03-10T11:00:00Z'); t0 += 5 * 60_000) {
    if (r() < 0.5) events.push({ event: 'tick', distinct_id: `z${Math.floor(r() * 8)}`, timestamp: new Date(t0).toISOString() })
  }
  await captureEvents(zoned, events)
  const localDay = (e: TestEvent) => new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(e.timestamp))
  const days = ['2024-03-08', '2024-03-09', '2024-03-10', '2024-03-11', '2024-03-12']
  const tick = (e: TestEvent) => e.event === 'tick'
  for (const mode of ['recurring', 'first_time'] as const) {
    const body = await queryOk(zoned, retention({ period: 'Day', totalIntervals: 4, retentionType: mode === 'recurring' ? 'retention_recurring' : 'retention_first_time', targetEntity: ev('tick'), returningEntity: ev('tick') }, { dateRange: { date_from: days[0], date_to: days[4] } }))
    assert.deepEqual(counts(body), expectedGrid(events, { periods: days, periodOf: localDay, target: tick, returning: tick, mode, totalIntervals: 4, actorOf: (e) => e.distinct_id }), mode)
    assert.deepEqual(body.results.map((x: { date: string }) => x.date), ['2024-03-08T00:00:00-05:00', '2024-03-09T00:00:00-05:00', '2024-03-10T00:00:00-05:00', '2024-03-11T00:00:00-04:00', '2024-03-12T00:00:00-04:00'])
  }
  const localHour = (e: TestEvent) => {
    const f = Object.fromEntries(new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit' }).formatToParts(new Date(e.timestamp)).map((x) => [x.type, x.value]))
    return `${f.year}-${f.month}-${f.day} ${f.hour}`
  }
  const hours = ['00', '01', '03', '04', '05'].map((h) => `2024-03-10 ${h}`)
  const hourly = await queryOk(zoned, retention({ period: 'Hour', totalIntervals: 3, targetEntity: ev('tick'), returningEntity: ev('tick') }, { dateRange: { date_from: '2024-03-10T00:00:00', date_to: '2024-03-10T05:00:00' } }))
  assert.deepEqual(hourly.results.map((x: { date: string }) => x.date), ['2024-03-10T00:00:00-05:00', '2024-03-10T01:00:00-05:00', '2024-03-10T03:00:00-04:00', '2024-03-10T04:00:00-04:00', '2024-03-10T05:00:00-04:00'])
  assert.deepEqual(counts(hourly), expectedGrid(events, { periods: hours, periodOf: localHour, target: tick, returning: tick, totalIntervals: 3, actorOf: (e) => e.distinct_id }))
  assert.deepEqual(hourly.results[0].values.map((v: { label: string }) => v.label), ['Hour 0', 'Hour 1', 'Hour 2'])
  const utcAnswer = expectedGrid(events, { periods: days, periodOf: utcDay, target: tick, returning: tick, totalIntervals: 4, actorOf: (e) => e.distinct_id })
  const zonedAnswer = expectedGrid(events, { periods: days, periodOf: localDay, target: tick, returning: tick, totalIntervals: 4, actorOf: (e) => e.distinct_id })
  assert.notDeepEqual(utcAnswer, zonedAnswer, 'the data set tells local days from UTC days')
})

testOnEachEngine('invalid retention queries: 400 naming the field', async (_t, engine) => {
  app = seeded.app(engine)
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ kind: 'RetentionQuery' }, 'query.retentionFilter'],
    [retention({ period: 'Year' }), 'query.retentionFilter.period'],
    [retention({ period: 'day' }), 'query.retentionFilter.period'],
    [retention({ retentionType: 'retention_sometimes' }), 'query.retentionFilter.retentionType'],
    [retention({ totalIntervals: 0 }), 'query.retentionFilter.totalIntervals'],
    [retention({ totalIntervals: 'many' }), 'query.retentionFilter.totalIntervals'],
    [retention({ targetEntity: { id: '$pageview', type: 'cohorts' } }), 'query.retentionFilter.targetEntity.type'],
    [retention({ targetEntity: { id: 42, type: 'events' } }), 'query.retentionFilter.targetEntity.id'],
    [retention({ returningEntity: { id: 999999, type: 'actions' } }), 'query.retentionFilter.returningEntity.id'],
    [retention({ returningEntity: 'play' }), 'query.retentionFilter.returningEntity'],
    [retention({ minimumOccurrences: 1.5 }), 'query.retentionFilter.minimumOccurrences'],
    [retention({ timeWindowMode: '24_hours' }), 'query.retentionFilter.timeWindowMode'],
    [retention({}, { aggregation_group_type_index: 7 }), 'query.aggregation_group_type_index'],
    [retention({}, { breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } }), 'query.breakdownFilter'],
    [retention({ period: 'Day' }, { dateRange: { date_from: '2024-01-01', date_to: '2024-06-01' } }), 'query.dateRange'],
    [retention({}, { dateRange: { date_from: 'yesterday-ish' } }), 'query.dateRange.date_from'],
  ]
  for (const [query, attr] of cases) {
    const res = await postQuery(app, query)
    assert.equal(res.statusCode, 400, `${JSON.stringify(query)}: ${res.body}`)
    assert.equal(res.json().attr, attr, JSON.stringify(query))
    assert.equal(res.json().type, 'validation_error')
  }
})
