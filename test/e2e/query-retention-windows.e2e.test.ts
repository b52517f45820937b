import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { testOnEachEngine } from '../helpers/engines.ts'
import { privateApi } from '../helpers/private-api.ts'
import { captureEvents, postQuery, queryOk, seededRandom, type TestEvent, seededApps } from '../helpers/query-data.ts'

// RetentionQuery's `minimumOccurrences` and `timeWindowMode: '24_hour_windows'`. Expected grids are
// computed here in plain JS over the fixture list, following PostHog's retention runner:
// - minimumOccurrences (calendar periods): a period after the cohort's counts only when the actor
//   did the returning event at least that many times in it; value 0 is the cohort's size as before.
// - 24-hour windows (RetentionRollingIntervalBaseQueryBuilder): one start t0 per actor (first target
//   event in the range, or first ever for first time); cohort floor(units(from, t0) / n), value k
//   the actors with a returning event at t >= t0 where floor(units(t0, t) / n) = k. Units are hour
//   boundaries (n = 24 for days, 1 for hours) or local-date boundaries (n = 7 weeks, 30 months).

const HOUR = 3_600_000
const DAY = 86_400_000
const ms = (e: TestEvent) => Date.parse(e.timestamp)
const iso = (t: number) => new Date(t).toISOString()
const counts = (body: Record<string, any>) => body.results.map((r: { values: Array<{ count: number }> }) => r.values.map((v) => v.count))
const retention = (filter: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ kind: 'RetentionQuery', retentionFilter: filter, ...extra })
const ev = (id: string) => ({ id, type: 'events', name: id })
const byTime = (events: readonly TestEvent[]) => [...events].sort((a, b) => ms(a) - ms(b))
type Mode = 'recurring' | 'first_time' | 'first_ever'
const TYPE: Record<Mode, string> = { recurring: 'retention_recurring', first_time: 'retention_first_time', first_ever: 'retention_first_ever_occurrence' }

function groupByActor(events: readonly TestEvent[], actorOf: (e: TestEvent) => string | null): Map<string, TestEvent[]> {
  const actors = new Map<string, TestEvent[]>()
  for (const e of byTime(events)) {
    const id = actorOf(e)
    if (id === null) continue
    actors.set(id, [...(actors.get(id) ?? []), e])
  }
  return actors
}

interface CalendarSpec {
  periods: string[]
  periodOf: (e: TestEvent) => string
  target: (e: TestEvent) => boolean
  returning: (e: TestEvent) => boolean
  mode: 'recurring' | 'first_time'
  minimumOccurrences: number
  totalIntervals: number
  cumulative?: boolean
  actorOf?: (e: TestEvent) => string | null
}

/** Calendar periods: per actor the periods entered a cohort in, and per period the number of returning events. */
function expectedCalendar(events: readonly TestEvent[], s: CalendarSpec): number[][] {
  const index = new Map(s.periods.map((p, i) => [p, i]))
  const grid = s.periods.map(() => new Array<number>(s.totalIntervals).fill(0))
  for (const evs of groupByActor(events, s.actorOf ?? ((e) => e.distinct_id)).values()) {
    const cohorts = new Set<number>()
    const returned = new Map<number, number>()
    for (const e of evs) {
      const i = index.get(s.periodOf(e))
      if (i === undefined) continue
      if (s.mode === 'recurring' && s.target(e)) cohorts.add(i)
      if (s.returning(e)) returned.set(i, (returned.get(i) ?? 0) + 1)
    }
    const first = evs.find(s.target)
    const firstAt = first ? index.get(s.periodOf(first)) : undefined
    if (s.mode === 'first_time' && firstAt !== undefined) cohorts.add(firstAt)
    const enough = (i: number) => (returned.get(i) ?? 0) >= s.minimumOccurrences
    for (const c of cohorts) {
      for (let k = 0; k < s.totalIntervals && c + k < s.periods.length; k++) {
        // Cumulative: back in period k or any later one of the row.
        const back = s.cumulative ? Array.from({ length: s.totalIntervals - k }, (_, j) => c + k + j).some(enough) : enough(c + k)
        if (k === 0 || back) grid[c]![k]!++
      }
    }
  }
  return grid
}

interface RollingSpec {
  /** The range: its start, its end and its number of rows. */
  from: number
  to: number
  rows: number
  /** The unit number of an instant (hours since the epoch, or the local date as a day number) and the units in one window. */
  unitOf: (t: number) => number
  units: number
  target: (e: TestEvent) => boolean
  returning: (e: TestEvent) => boolean
  targetAny?: (e: TestEvent) => boolean
  mode: Mode
  totalIntervals: number
  actorOf?: (e: TestEvent) => string | null
}

function expectedRolling(events: readonly TestEvent[], s: RollingSpec): number[][] {
  const grid = Array.from({ length: s.rows }, () => new Array<number>(s.totalIntervals).fill(0))
  for (const all of groupByActor(events, s.actorOf ?? ((e) => e.distinct_id)).values()) {
    // Recurring sees the range only; first time the whole history, returns after the range included.
    const evs = s.mode === 'recurring' ? all.filter((e) => ms(e) >= s.from && ms(e) < s.to) : all
    const firstAny = s.mode === 'first_ever' ? evs.find(s.targetAny!) : undefined
    const start = s.mode === 'first_ever' ? (firstAny && s.target(firstAny) ? firstAny : undefined) : evs.find(s.target)
    if (!start) continue
    const u0 = s.unitOf(ms(start))
    const c = Math.floor((u0 - s.unitOf(s.from)) / s.units)
    if (c < 0 || c >= s.rows) continue
    const back = new Set([0])
    for (const e of evs) {
      if (!s.returning(e) || ms(e) < ms(start)) continue
      const k = Math.floor((s.unitOf(ms(e)) - u0) / s.units)
      if (k < s.totalIntervals) back.add(k)
    }
    for (const k of back) grid[c]![k]!++
  }
  return grid
}

const hourNumber = (t: number) => Math.floor(t / HOUR) // whole-hour zones: ClickHouse's dateDiff('hour')
const localDayNumber = (timeZone: string) => {
  const f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })
  return (t: number) => Date.parse(`${f.format(new Date(t))}T00:00:00Z`) / DAY
}
const dayList = (from: string, days: number) => Array.from({ length: days }, (_, i) => iso(Date.parse(`${from}T00:00:00Z`) + i * DAY).slice(0, 10))

// Data set: 40 persons over 2024-06-01..2024-06-16 (UTC), person p from day p % 13 on (first-time
// cohorts all over the range), 1-3 plays on about half of their days at any minute of the day, a
// few signups; persons below 25 in one of five companies.
const rand = seededRandom(23)
const daily: TestEvent[] = []
for (let p = 0; p < 40; p++) {
  const groups = p < 25 ? { $groups: { company: `k${p % 5}` } } : {}
  for (let d = p % 13; d < 16; d++) {
    const day = Date.parse('2024-06-01T00:00:00Z') + d * DAY
    const at = () => iso(day + Math.floor(rand() * 1440) * 60_000)
    if (rand() < 0.45) {
      const n = 1 + Math.floor(rand() * 3)
      for (let i = 0; i < n; i++) daily.push({ event: 'play', distinct_id: `r-${p}`, timestamp: at(), properties: { ...groups, $browser: rand() < 0.5 ? 'Chrome' : 'Safari' } })
    }
    if (rand() < 0.12) daily.push({ event: 'signup', distinct_id: `r-${p}`, timestamp: at(), properties: { ...groups } })
  }
}
// Weeks and months: 25 other persons over 2024-01-01..2024-05-31, person p from day 4p on, an open
// on 8% of their days.
const sparse: TestEvent[] = []
for (let d = 0; d < 152; d++) {
  for (let p = 0; p < 25; p++) {
    if (d >= 4 * p && rand() < 0.08) sparse.push({ event: 'open', distinct_id: `s-${p}`, timestamp: iso(Date.parse('2024-01-01T00:00:00Z') + d * DAY + Math.floor(rand() * 1440) * 60_000) })
  }
}

const RANGE = dayList('2024-06-05', 7)
const dateRange = { date_from: RANGE[0], date_to: RANGE[6] }
const FROM = Date.parse('2024-06-05T00:00:00Z')
const TO = Date.parse('2024-06-12T00:00:00Z')
const play = (e: TestEvent) => e.event === 'play'
const signup = (e: TestEvent) => e.event === 'signup'
const companyOf = (e: TestEvent) => ((e.properties?.$groups as { company?: string } | undefined)?.company ?? null)
const utcDay = (e: TestEvent) => e.timestamp.slice(0, 10)

let app: TestApp
const seeded = seededApps([...daily, ...sparse])

testOnEachEngine('minimumOccurrences: a later period counts only with that many returning events in it; the cohort size is unchanged', async (_t, engine) => {
  app = seeded.app(engine)
  const calendar = { periods: RANGE, periodOf: utcDay, target: play, returning: play, totalIntervals: 5 }
  for (const mode of ['recurring', 'first_time'] as const) {
    const once = expectedCalendar(daily, { ...calendar, mode, minimumOccurrences: 1 })
    const defaults = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, retentionType: TYPE[mode], targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange }))
    assert.deepEqual(counts(defaults), once, mode)
    for (const minimumOccurrences of [2, 3]) {
      const body = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, retentionType: TYPE[mode], minimumOccurrences, targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange }))
      const expected = expectedCalendar(daily, { ...calendar, mode, minimumOccurrences })
      assert.deepEqual(counts(body), expected, `${mode}, at least ${minimumOccurrences}`)
      assert.notDeepEqual(expected, once, `${mode}: the data set tells ${minimumOccurrences} occurrences from 1`)
      assert.deepEqual(expected.map((r) => r[0]), once.map((r) => r[0]), 'the cohort period needs no occurrences')
    }
  }
  const cumulative = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, cumulative: true, minimumOccurrences: 3, targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange }))
  assert.deepEqual(counts(cumulative), expectedCalendar(daily, { ...calendar, mode: 'recurring', minimumOccurrences: 3, cumulative: true }))
  // 0 reads as 1, as PostHog's `minimumOccurrences or 1`.
  const zero = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, minimumOccurrences: 0, targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange }))
  assert.deepEqual(counts(zero), expectedCalendar(daily, { ...calendar, mode: 'recurring', minimumOccurrences: 1 }))
})

testOnEachEngine('minimumOccurrences with another returning event, a property filter, groups and weeks', async (_t, engine) => {
  app = seeded.app(engine)
  const signupThenPlays = await queryOk(app, retention({ period: 'Day', totalIntervals: 6, retentionType: 'retention_first_time', minimumOccurrences: 2, targetEntity: ev('signup'), returningEntity: ev('play') }, { dateRange }))
  assert.deepEqual(counts(signupThenPlays), expectedCalendar(daily, { periods: RANGE, periodOf: utcDay, target: signup, returning: play, mode: 'first_time', minimumOccurrences: 2, totalIntervals: 6 }))

  const chrome = (e: TestEvent) => e.properties?.$browser === 'Chrome'
  const filtered = await queryOk(app, retention(
    { period: 'Day', totalIntervals: 5, minimumOccurrences: 2, targetEntity: ev('play'), returningEntity: ev('play') },
    { dateRange, properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] },
  ))
  const chromeOnly = daily.filter(chrome)
  assert.deepEqual(counts(filtered), expectedCalendar(chromeOnly, { periods: RANGE, periodOf: utcDay, target: play, returning: play, mode: 'recurring', minimumOccurrences: 2, totalIntervals: 5 }))

  const byCompany = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, minimumOccurrences: 4, targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange, aggregation_group_type_index: 0 }))
  const companies = { periods: RANGE, periodOf: utcDay, target: play, returning: play, mode: 'recurring' as const, totalIntervals: 5, actorOf: companyOf }
  assert.deepEqual(counts(byCompany), expectedCalendar(daily, { ...companies, minimumOccurrences: 4 }))
  assert.notDeepEqual(counts(byCompany), expectedCalendar(daily, { ...companies, minimumOccurrences: 1 }), 'a company counts the events of all its persons')

  const weekOf = (e: TestEvent) => {
    const d = new Date(`${utcDay(e)}T00:00:00Z`)
    return iso(d.getTime() - d.getUTCDay() * DAY).slice(0, 10)
  }
  const weeks = Array.from({ length: 8 }, (_, i) => iso(Date.parse('2024-01-07T00:00:00Z') + i * 7 * DAY).slice(0, 10))
  const open = (e: TestEvent) => e.event === 'open'
  const weekly = await queryOk(app, retention({ period: 'Week', totalIntervals: 5, minimumOccurrences: 2, targetEntity: ev('open'), returningEntity: ev('open') }, { dateRange: { date_from: '2024-01-07', date_to: '2024-02-29' } }))
  const weekSpec = { periods: weeks, periodOf: weekOf, target: open, returning: open, mode: 'recurring' as const, totalIntervals: 5 }
  assert.deepEqual(counts(weekly), expectedCalendar(sparse, { ...weekSpec, minimumOccurrences: 2 }))
  assert.notDeepEqual(counts(weekly), expectedCalendar(sparse, { ...weekSpec, minimumOccurrences: 1 }))
})

testOnEachEngine('24-hour windows: days counted from each person\'s first target event, recurring, first time and first-ever', async (_t, engine) => {
  app = seeded.app(engine)
  const rolling = { from: FROM, to: TO, rows: 7, unitOf: hourNumber, units: 24, target: play, returning: play, totalIntervals: 5 }
  for (const mode of ['recurring', 'first_time'] as const) {
    const body = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, retentionType: TYPE[mode], timeWindowMode: '24_hour_windows', targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange }))
    const expected = expectedRolling(daily, { ...rolling, mode })
    assert.deepEqual(counts(body), expected, mode)
    assert.deepEqual(body.results.map((r: { date: string }) => r.date), RANGE.map((d) => `${d}T00:00:00Z`))
    const strict = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, retentionType: TYPE[mode], timeWindowMode: 'strict_calendar_dates', targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange }))
    assert.deepEqual(counts(strict), expectedCalendar(daily, { periods: RANGE, periodOf: utcDay, target: play, returning: play, mode, minimumOccurrences: 1, totalIntervals: 5 }))
    assert.notDeepEqual(expected, counts(strict), `${mode}: the data set tells 24-hour windows from calendar days`)
  }
  // First time counts returns after the range's end (PostHog's rolling builder bounds no time for it).
  const lastRows = expectedRolling(daily, { ...rolling, mode: 'first_time' }).slice(5)
  const clipped = expectedRolling(daily.filter((e) => ms(e) < TO), { ...rolling, mode: 'first_time' }).slice(5)
  assert.notDeepEqual(lastRows, clipped, 'the data set has returns after date_to')

  const chromePlay = { ...ev('play'), properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] }
  const firstEver = await queryOk(app, retention({ period: 'Day', totalIntervals: 4, retentionType: TYPE.first_ever, timeWindowMode: '24_hour_windows', targetEntity: chromePlay, returningEntity: ev('signup') }, { dateRange }))
  const chrome = (e: TestEvent) => play(e) && e.properties?.$browser === 'Chrome'
  assert.deepEqual(counts(firstEver), expectedRolling(daily, { ...rolling, totalIntervals: 4, mode: 'first_ever', target: chrome, targetAny: play, returning: signup }))

  const byCompany = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, timeWindowMode: '24_hour_windows', targetEntity: ev('signup'), returningEntity: ev('play') }, { dateRange, aggregation_group_type_index: 0 }))
  assert.deepEqual(counts(byCompany), expectedRolling(daily, { ...rolling, mode: 'recurring', target: signup, actorOf: companyOf }))

  // PostHog's rolling builder ignores minimumOccurrences.
  const withMinimum = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, minimumOccurrences: 3, timeWindowMode: '24_hour_windows', targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange }))
  assert.deepEqual(counts(withMinimum), expectedRolling(daily, { ...rolling, mode: 'recurring' }))
})

testOnEachEngine('24-hour windows by week (7 local dates) and month (30 local dates)', async (_t, engine) => {
  app = seeded.app(engine)
  const open = (e: TestEvent) => e.event === 'open'
  const utcDayNumber = localDayNumber('UTC')
  const weekly = await queryOk(app, retention({ period: 'Week', totalIntervals: 5, timeWindowMode: '24_hour_windows', targetEntity: ev('open'), returningEntity: ev('open') }, { dateRange: { date_from: '2024-01-07', date_to: '2024-02-29' } }))
  const weeks = { from: Date.parse('2024-01-07T00:00:00Z'), to: Date.parse('2024-03-03T00:00:00Z'), rows: 8, unitOf: utcDayNumber, units: 7, target: open, returning: open, mode: 'recurring' as const, totalIntervals: 5 }
  assert.deepEqual(counts(weekly), expectedRolling(sparse, weeks))
  const monthly = await queryOk(app, retention({ period: 'Month', totalIntervals: 3, retentionType: 'retention_first_time', timeWindowMode: '24_hour_windows', targetEntity: ev('open'), returningEntity: ev('open') }, { dateRange: { date_from: '2024-01-01', date_to: '2024-03-31' } }))
  const months = { from: Date.parse('2024-01-01T00:00:00Z'), to: Date.parse('2024-04-01T00:00:00Z'), rows: 3, unitOf: utcDayNumber, units: 30, target: open, returning: open, mode: 'first_time' as const, totalIntervals: 3 }
  const expected = expectedRolling(sparse, months)
  assert.deepEqual(counts(monthly), expected)
  assert.deepEqual(monthly.results.map((r: { date: string }) => r.date), ['2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z', '2024-03-01T00:00:00Z'])
  const calendarMonths = await queryOk(app, retention({ period: 'Month', totalIntervals: 3, retentionType: 'retention_first_time', targetEntity: ev('open'), returningEntity: ev('open') }, { dateRange: { date_from: '2024-01-01', date_to: '2024-03-31' } }))
  assert.notDeepEqual(counts(calendarMonths), expected, 'the data set tells 30-day windows from calendar months')
})

testOnEachEngine('24-hour windows in the project timezone across DST (America/New_York): hours counted, local dates for weeks', async (t, engine) => {
  const zoned = await buildTestApp(t, { engine, env: { TALLY_LOG_LEVEL: 'silent' } })
  const ZONE = 'America/New_York'
  assert.equal((await privateApi(zoned).patch('/', { timezone: ZONE })).statusCode, 200)
  const r = seededRandom(8)
  const events: TestEvent[] = []
  // Every 40 minutes over 2024-03-05..2024-03-20 (spring forward on the 10th), 10 persons, person i from day i on.
  const start = Date.parse('2024-03-05T00:00:00Z')
  for (let t0 = start; t0 < Date.parse('2024-03-20T00:00:00Z'); t0 += 40 * 60_000) {
    const i = Math.floor(r() * 10)
    if (r() < 0.12 && t0 >= start + i * DAY) events.push({ event: 'tick', distinct_id: `z${i}`, timestamp: iso(t0) })
  }
  // Saturday 9 March 23:30 local is Sunday in UTC (another week); back 7 local dates later, on Saturday 16 March.
  events.push({ event: 'tick', distinct_id: 'edge', timestamp: '2024-03-10T04:30:00Z' }, { event: 'tick', distinct_id: 'edge', timestamp: '2024-03-17T03:30:00Z' })
  await captureEvents(zoned, events)
  const tick = (e: TestEvent) => e.event === 'tick'
  // Local midnight of 8 March is 05:00Z; the range's 7 local days end at 04:00Z on the 15th (one 23-hour day).
  const days = { from: Date.parse('2024-03-08T05:00:00Z'), to: Date.parse('2024-03-15T04:00:00Z'), rows: 7, unitOf: hourNumber, units: 24, target: tick, returning: tick, totalIntervals: 4 }
  for (const mode of ['recurring', 'first_time'] as const) {
    const body = await queryOk(zoned, retention({ period: 'Day', totalIntervals: 4, retentionType: TYPE[mode], timeWindowMode: '24_hour_windows', targetEntity: ev('tick'), returningEntity: ev('tick') }, { dateRange: { date_from: '2024-03-08', date_to: '2024-03-14' } }))
    const expected = expectedRolling(events, { ...days, mode })
    assert.deepEqual(counts(body), expected, mode)
    assert.equal(body.results[3].date, '2024-03-11T00:00:00-04:00')
    assert.notDeepEqual(expectedRolling(events, { ...days, mode, from: Date.parse('2024-03-08T00:00:00Z') }), expected, 'the data set tells local midnight from UTC midnight')
  }
  const weekly = await queryOk(zoned, retention({ period: 'Week', totalIntervals: 3, retentionType: 'retention_first_time', timeWindowMode: '24_hour_windows', targetEntity: ev('tick'), returningEntity: ev('tick') }, { dateRange: { date_from: '2024-03-03', date_to: '2024-03-16' } }))
  const weeks = { from: Date.parse('2024-03-03T05:00:00Z'), to: Date.parse('2024-03-17T04:00:00Z'), rows: 2, unitOf: localDayNumber(ZONE), units: 7, target: tick, returning: tick, mode: 'first_time' as const, totalIntervals: 3 }
  assert.deepEqual(counts(weekly), expectedRolling(events, weeks))
  assert.notDeepEqual(expectedRolling(events, weeks), expectedRolling(events, { ...weeks, from: Date.parse('2024-03-03T00:00:00Z'), unitOf: localDayNumber('UTC') }), 'the data set tells local dates from UTC dates')
})

testOnEachEngine('RetentionFilter fields that would change the answer and are not computed: 400 naming the field; display-only fields accepted', async (_t, engine) => {
  app = seeded.app(engine)
  const cases: Array<[Record<string, unknown>, string]> = [
    [retention({ timeWindowMode: '24_hour_windows', cumulative: true }), 'query.retentionFilter.cumulative'],
    [retention({ timeWindowMode: 'rolling' }), 'query.retentionFilter.timeWindowMode'],
    [retention({ minimumOccurrences: 'twice' }), 'query.retentionFilter.minimumOccurrences'],
    [retention({ aggregationType: 'sum', aggregationProperty: 'revenue' }), 'query.retentionFilter.aggregationType'],
    [retention({ aggregationType: 'avg', aggregationProperty: 'revenue' }), 'query.retentionFilter.aggregationType'],
    [retention({ aggregationType: 'median' }), 'query.retentionFilter.aggregationType'],
    [retention({ retentionCustomBrackets: [1, 3, 7] }), 'query.retentionFilter.retentionCustomBrackets'],
    [retention({ retentionCustomBrackets: 7 }), 'query.retentionFilter.retentionCustomBrackets'],
    [retention({ customAggregationTarget: true }), 'query.retentionFilter.customAggregationTarget'],
    [retention({ meanRetentionCalculation: 'median' }), 'query.retentionFilter.meanRetentionCalculation'],
    [retention({ retentionReference: 'first' }), 'query.retentionFilter.retentionReference'],
  ]
  for (const [query, attr] of cases) {
    const res = await postQuery(app, query)
    assert.equal(res.statusCode, 400, `${JSON.stringify(query)}: ${res.body}`)
    assert.equal(res.json().attr, attr, JSON.stringify(query))
    assert.equal(res.json().type, 'validation_error')
  }
  const plain = await queryOk(app, retention({ period: 'Day', totalIntervals: 4, targetEntity: ev('play'), returningEntity: ev('play') }, { dateRange }))
  const decorated = await queryOk(app, retention({
    period: 'Day', totalIntervals: 4, targetEntity: ev('play'), returningEntity: ev('play'),
    meanRetentionCalculation: 'weighted', retentionReference: 'previous', showMean: true, display: 'ActionsLineGraph', dashboardDisplay: 'table_only',
    showTrendLines: true, selectedInterval: 2, cohortLabelStartIndex: 1, aggregationType: 'sum', retentionCustomBrackets: [], customAggregationTarget: false,
  }, { dateRange }))
  assert.deepEqual(counts(decorated), counts(plain), 'sum without aggregationProperty counts actors, as in PostHog')
})
