import assert from 'node:assert/strict'
import { buildTestApp } from '../helpers/test-app.ts'
import { testOnEachEngine } from '../helpers/engines.ts'
import { privateApi } from '../helpers/private-api.ts'
import { captureEvents, queryOk, type TestEvent } from '../helpers/query-data.ts'

const ZONE = 'Europe/Amsterdam'

/** The local date and hour of an instant in the zone, by the runtime's own zone data (not Tally's code). */
function local(iso: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit' })
      .formatToParts(new Date(iso)).map((p) => [p.type, p.value]),
  )
  return { date: `${parts.year}-${parts.month}-${parts.day}`, hour: parts.hour! }
}

/** One event every 30 minutes (UTC) from `from` for `hours` hours. */
function everyHalfHour(from: string, hours: number): TestEvent[] {
  const start = Date.parse(from)
  return Array.from({ length: hours * 2 }, (_, i) => ({ event: 'tick', distinct_id: `u${i % 5}`, timestamp: new Date(start + i * 1_800_000).toISOString() }))
}

const countBy = <T,>(items: T[], key: (t: T) => string) => items.reduce((m, t) => m.set(key(t), (m.get(key(t)) ?? 0) + 1), new Map<string, number>())
const trends = (interval: string, dateFrom: string, dateTo: string) => ({
  kind: 'TrendsQuery', interval, series: [{ kind: 'EventsNode', event: 'tick' }], dateRange: { date_from: dateFrom, date_to: dateTo },
})

testOnEachEngine('project timezone: PATCHable as PostHog\'s `timezone`; an unknown zone is a 400 naming the field', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const api = privateApi(app)
  const bad = await api.patch('/', { timezone: 'Mars/Olympus' })
  assert.equal(bad.statusCode, 400, bad.body)
  assert.equal(bad.json().attr, 'timezone')
  const ok = await api.patch('/', { timezone: ZONE })
  assert.equal(ok.statusCode, 200, ok.body)
  assert.equal((await api.get('/')).json().timezone, ZONE)
})

testOnEachEngine('DST in Europe/Amsterdam: the spring-forward day holds 23 hours of events, the fall-back day 25; hourly buckets follow the local clock', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  assert.equal((await privateApi(app).patch('/', { timezone: ZONE })).statusCode, 200)
  const spring = everyHalfHour('2024-03-29T00:00:00Z', 4 * 24)
  const autumn = everyHalfHour('2024-10-25T22:00:00Z', 3 * 24)
  await captureEvents(app, [...spring, ...autumn])

  // Daily, spring: each local day's count computed from the events with Intl.
  const daily = await queryOk(app, trends('day', '2024-03-29', '2024-04-01'))
  assert.equal(daily.timezone, ZONE)
  const [series] = daily.results
  const expected = countBy(spring, (e) => local(e.timestamp).date)
  assert.deepEqual(series.days, ['2024-03-29', '2024-03-30', '2024-03-31', '2024-04-01'])
  assert.deepEqual(series.data, series.days.map((d: string) => expected.get(d) ?? 0))
  assert.equal(series.data[2], 46, '23 hours of half-hourly events on 31 March')
  assert.equal(series.data[1], 48)

  // Daily, autumn: 27 October is 25 hours long.
  const autumnDaily = (await queryOk(app, trends('day', '2024-10-26', '2024-10-28'))).results[0]
  const autumnExpected = countBy(autumn, (e) => local(e.timestamp).date)
  assert.deepEqual(autumnDaily.data, autumnDaily.days.map((d: string) => autumnExpected.get(d) ?? 0))
  assert.equal(autumnDaily.data[1], 50, '25 hours of half-hourly events on 27 October')

  // Hourly on the fall-back day: 25 buckets, 02:00 twice (CEST then CET), two events in each.
  const hourly = (await queryOk(app, trends('hour', '2024-10-27', '2024-10-27'))).results[0]
  assert.equal(hourly.days.length, 25)
  assert.equal(hourly.days.filter((d: string) => d === '2024-10-27 02:00:00').length, 2)
  assert.deepEqual(hourly.data, hourly.days.map(() => 2))
  assert.equal(hourly.labels[2], '27-Oct-2024 02:00')

  // Hourly on the spring-forward day: 23 buckets, no 02:00; each local hour's count from Intl.
  const springHourly = (await queryOk(app, trends('hour', '2024-03-31', '2024-03-31'))).results[0]
  assert.equal(springHourly.days.length, 23)
  assert.ok(!springHourly.days.includes('2024-03-31 02:00:00'))
  const perHour = countBy(spring.filter((e) => local(e.timestamp).date === '2024-03-31'), (e) => `2024-03-31 ${local(e.timestamp).hour}:00:00`)
  assert.deepEqual(springHourly.data, springHourly.days.map((d: string) => perHour.get(d) ?? 0))

  // Weekly: weeks start on Sunday (31 March 2024 is one), in local time.
  const weekly = (await queryOk(app, trends('week', '2024-03-29', '2024-04-01'))).results[0]
  assert.deepEqual(weekly.days, ['2024-03-24', '2024-03-31'])
  const inRange = spring.filter((e) => local(e.timestamp).date <= '2024-04-01')
  const before = inRange.filter((e) => local(e.timestamp).date < '2024-03-31').length
  assert.deepEqual(weekly.data, [before, inRange.length - before])
})
