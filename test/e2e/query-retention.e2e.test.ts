import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { privateApi } from '../helpers/private-api.ts'
import { captureEvents, postQuery, queryOk, seededRandom, type TestEvent } from '../helpers/query-data.ts'

// Retention grids against per-person period sets computed here from the fixture, in the project's
// zone (Europe/Berlin, whose clocks went forward on 2024-03-31) with the runtime's own zone data.
const ZONE = 'Europe/Berlin'
const rand = seededRandom(11)
const DAY = 86_400_000
const events: TestEvent[] = []
// 40 persons from 2024-03-10 to 2024-04-20; persons 0-5 anonymous until 2024-03-25, then identified.
for (let p = 0; p < 40; p++) {
  for (let d = 0; d < 42; d++) {
    if (rand() < 0.75) continue
    const at = Date.parse('2024-03-10T00:00:00Z') + d * DAY + Math.floor(rand() * DAY)
    const distinctId = p < 6 && at < Date.parse('2024-03-25T00:00:00Z') ? `anon-${p}` : `user-${p}`
    const event = rand() < 0.4 ? 'signup' : rand() < 0.8 ? 'use' : 'other'
    events.push({ event, distinct_id: distinctId, timestamp: new Date(at).toISOString(), properties: { plan: p % 3 === 0 ? 'pro' : 'free' } })
  }
}
for (let p = 0; p < 6; p++) events.push({ event: '$identify', distinct_id: `user-${p}`, timestamp: '2024-03-25T00:00:30Z', properties: { $anon_distinct_id: `anon-${p}` } })
// Edges: an event in the last local hour of a Berlin day that is already the next day in UTC, and the reverse.
events.push({ event: 'signup', distinct_id: 'edge', timestamp: '2024-03-30T23:30:00Z' }) // 2024-03-31 00:30 in Berlin
events.push({ event: 'use', distinct_id: 'edge', timestamp: '2024-03-31T22:30:00Z' }) // 2024-04-01 00:30 in Berlin (summer time)

const personOf = (id: string) => id.replace(/^anon-/, 'user-')
function localDate(ms: number): string {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(new Date(ms)).map((x) => [x.type, x.value]))
  return `${parts.year}-${parts.month}-${parts.day}`
}
/** The period holding an instant: a local date, the Sunday that starts its week, or its month. */
function periodOf(ms: number, period: 'Day' | 'Week' | 'Month'): string {
  const date = localDate(ms)
  if (period === 'Month') return date.slice(0, 7)
  if (period === 'Day') return date
  const d = new Date(`${date}T00:00:00Z`)
  return new Date(d.getTime() - d.getUTCDay() * DAY).toISOString().slice(0, 10)
}

interface Options { period: 'Day' | 'Week' | 'Month'; periods: string[]; total: number; firstTime: boolean; target: (e: TestEvent) => boolean; returning: (e: TestEvent) => boolean }
/** The grid: per cohort period, persons in it, and of those, who came back k periods later. */
function expectedGrid(o: Options): number[][] {
  const cohorts = new Map<string, Set<string>>()
  const returns = new Map<string, Set<string>>()
  const add = (m: Map<string, Set<string>>, p: string, period: string) => m.set(p, (m.get(p) ?? new Set()).add(period))
  const firstTarget = new Map<string, number>()
  for (const e of events) {
    const p = personOf(e.distinct_id)
    const at = Date.parse(e.timestamp)
    if (o.target(e)) {
      if (o.firstTime) firstTarget.set(p, Math.min(firstTarget.get(p) ?? Infinity, at))
      else add(cohorts, p, periodOf(at, o.period))
    }
    if (o.returning(e)) add(returns, p, periodOf(at, o.period))
  }
  for (const [p, at] of firstTarget) add(cohorts, p, periodOf(at, o.period))
  return o.periods.map((c, ci) => {
    const members = [...cohorts].filter(([, set]) => set.has(c)).map(([p]) => p)
    return Array.from({ length: Math.min(o.total, o.periods.length - ci) }, (_, k) =>
      k === 0 ? members.length : members.filter((p) => returns.get(p)?.has(o.periods[ci + k]!)).length)
  })
}

const days = (from: string, n: number) => Array.from({ length: n }, (_, i) => new Date(Date.parse(`${from}T00:00:00Z`) + i * DAY).toISOString().slice(0, 10))
const retention = (filter: Record<string, unknown>, dateRange: object, extra: object = {}) => ({
  kind: 'RetentionQuery', dateRange, retentionFilter: { targetEntity: { id: 'signup', type: 'events' }, returningEntity: { id: 'use', type: 'events' }, ...filter }, ...extra,
})
const counts = (results: Array<{ values: Array<{ count: number }> }>) => results.map((r) => r.values.map((v) => v.count))
const isEvent = (name: string) => (e: TestEvent) => e.event === name

test('retention grids (recurring and first time; days, weeks, months) in the project zone across a DST change', async (t) => {
  const app = await buildTestApp(t)
  assert.equal((await privateApi(app).patch('/', { timezone: ZONE })).statusCode, 200)
  await captureEvents(app, events)

  // Days 2024-03-25..2024-04-05: a range boundary with persons whose first signup came before it.
  const periods = days('2024-03-25', 12)
  const dateRange = { date_from: periods[0], date_to: periods[periods.length - 1] }
  const recurring = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, retentionType: 'retention_recurring' }, dateRange))
  const expectRecurring = expectedGrid({ period: 'Day', periods, total: 5, firstTime: false, target: isEvent('signup'), returning: isEvent('use') })
  assert.deepEqual(counts(recurring.results), expectRecurring)
  assert.deepEqual(recurring.results.map((r: any) => r.label), periods.map((_, i) => `Day ${i}`))
  assert.deepEqual(recurring.results[0].values.map((v: any) => v.label), ['Day 0', 'Day 1', 'Day 2', 'Day 3', 'Day 4'])
  assert.equal(recurring.results[0].date, '2024-03-25T00:00:00+01:00')
  assert.equal(recurring.results[7].date, '2024-04-01T00:00:00+02:00')
  assert.equal(recurring.results[11].values.length, 1, 'the last cohort has only its own period')

  const firstTime = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, retentionType: 'retention_first_time' }, dateRange))
  const expectFirst = expectedGrid({ period: 'Day', periods, total: 5, firstTime: true, target: isEvent('signup'), returning: isEvent('use') })
  assert.deepEqual(counts(firstTime.results), expectFirst)
  assert.notDeepEqual(expectFirst, expectRecurring, 'the data tells first time from recurring')
  const edge = periods.indexOf('2024-03-31')
  assert.ok(expectFirst[edge]![0]! >= 1 && expectFirst[edge]![1]! >= 1, 'the DST-edge person is in the 03-31 cohort and back on 04-01 (Berlin days)')

  // Weeks (Sunday start) and months, recurring; target = returning (PostHog's default when one is given).
  const weeks = ['2024-03-10', '2024-03-17', '2024-03-24', '2024-03-31', '2024-04-07', '2024-04-14']
  const weekly = await queryOk(app, retention({ period: 'Week', totalIntervals: 4, returningEntity: undefined }, { date_from: '2024-03-10', date_to: '2024-04-20' }))
  assert.deepEqual(counts(weekly.results), expectedGrid({ period: 'Week', periods: weeks, total: 4, firstTime: false, target: isEvent('signup'), returning: isEvent('signup') }))
  const monthly = await queryOk(app, retention({ period: 'Month', totalIntervals: 3 }, { date_from: '2024-03-01', date_to: '2024-04-30' }))
  assert.deepEqual(counts(monthly.results), expectedGrid({ period: 'Month', periods: ['2024-03', '2024-04'], total: 3, firstTime: false, target: isEvent('signup'), returning: isEvent('use') }))

  // An action as the returning entity, and a property filter on both.
  const action = await privateApi(app).post('/actions/', { name: 'Used or other', steps: [{ event: 'use' }, { event: 'other' }] })
  const withAction = await queryOk(app, retention({ period: 'Day', totalIntervals: 5, returningEntity: { id: action.json().id, type: 'actions' } }, dateRange))
  assert.deepEqual(counts(withAction.results), expectedGrid({ period: 'Day', periods, total: 5, firstTime: false, target: isEvent('signup'), returning: (e) => e.event === 'use' || e.event === 'other' }))
  const pro = await queryOk(app, retention({ period: 'Day', totalIntervals: 5 }, dateRange, { properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }] }))
  const isPro = (e: TestEvent) => e.properties?.plan === 'pro'
  assert.deepEqual(counts(pro.results), expectedGrid({ period: 'Day', periods, total: 5, firstTime: false, target: (e) => isPro(e) && e.event === 'signup', returning: (e) => isPro(e) && e.event === 'use' }))
})

test('retention refuses what it cannot compute, naming the field', async (t) => {
  const app = await buildTestApp(t)
  const range = { date_from: '2024-03-01', date_to: '2024-03-10' }
  const cases: Array<[unknown, string]> = [
    [{ kind: 'RetentionQuery', dateRange: range }, 'query.retentionFilter'],
    [retention({ period: 'Fortnight' }, range), 'query.retentionFilter.period'],
    [retention({ retentionType: 'sometimes' }, range), 'query.retentionFilter.retentionType'],
    [retention({ totalIntervals: 0 }, range), 'query.retentionFilter.totalIntervals'],
    [retention({ targetEntity: { id: 999, type: 'actions' } }, range), 'query.retentionFilter.targetEntity.id'],
    [retention({ period: 'Day' }, { date_from: '2024-01-01', date_to: '2024-06-01' }), 'query.dateRange'],
  ]
  for (const [query, attr] of cases) {
    const r = await postQuery(app, query)
    assert.equal(r.statusCode, 400, `${attr}: ${r.body}`)
    assert.equal(r.json().attr, attr, r.body)
  }
  // Without a range: the last totalIntervals periods up to today.
  const res = await queryOk(app, { kind: 'RetentionQuery', retentionFilter: { targetEntity: { id: 'signup', type: 'events' }, totalIntervals: 4 } })
  assert.equal(res.results.length, 4)
  assert.deepEqual(res.results.map((r: any) => r.values.length), [4, 3, 2, 1])
})
