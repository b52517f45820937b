import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type TestApp } from '../helpers/test-app.ts'
import { testOnEachEngine } from '../helpers/engines.ts'
import { postQuery, queryOk, seededRandom, type TestEvent, seededApps } from '../helpers/query-data.ts'

// ActorsQuery over a RetentionQuery (the persons of one cohort row, PostHog's retention modal) and
// groups' created_at. The expected actors and their appearances are computed here in plain JS over
// the fixture list: per actor the periods it entered a cohort in and the periods it came back in;
// the actors of row i are those with a cohort at i, appearances 0 and every k in 1..L-1 with a
// return at period i + k.

const HOUR = 3_600_000
const DAY = 86_400_000
const ms = (e: TestEvent) => Date.parse(e.timestamp)
const pad2 = (n: number) => String(n).padStart(2, '0')
const dayList = (from: string, days: number) => Array.from({ length: days }, (_, i) => new Date(Date.parse(`${from}T00:00:00Z`) + i * DAY).toISOString().slice(0, 10))
const personOf = (e: TestEvent) => e.distinct_id.replace(/^anon-/, 'user-')
const companyOf = (e: TestEvent) => ((e.properties?.$groups as Record<string, string> | undefined)?.company ?? null)

// 30 persons over 2024-05-28..2024-06-12; persons 0-4 anonymous until they identify on 2024-06-03;
// persons below 24 in one of six companies, each company created by a $groupidentify at its own time.
const rand = seededRandom(23)
const events: TestEvent[] = []
for (const day of dayList('2024-05-28', 16)) {
  for (let p = 0; p < 30; p++) {
    const distinctId = p < 5 && day < '2024-06-03' ? `anon-${p}` : `user-${p}`
    const groups = p < 24 ? { $groups: { company: `c${p % 6}` } } : {}
    const plays = rand() < 0.45 ? 1 + Math.floor(rand() * 3) : 0
    for (let j = 0; j < plays; j++) events.push({ event: 'play', distinct_id: distinctId, timestamp: `${day}T${pad2((p + 7 * j) % 24)}:${pad2(5 + j)}:00Z`, properties: { ...groups } })
    if (rand() < 0.12) events.push({ event: 'signup', distinct_id: distinctId, timestamp: `${day}T${pad2(p % 24)}:40:00Z`, properties: { ...groups } })
  }
}
for (let p = 0; p < 5; p++) events.push({ event: '$identify', distinct_id: `user-${p}`, timestamp: '2024-06-03T23:30:00Z', properties: { $anon_distinct_id: `anon-${p}` } })
// Companies created out of key order: c3 first, then c0, c5, c1, c4, c2.
const CREATED = ['c3', 'c0', 'c5', 'c1', 'c4', 'c2']
for (const [i, company] of CREATED.entries()) {
  events.push({ event: '$groupidentify', distinct_id: 'admin', timestamp: `2024-05-20T0${i}:00:00Z`, properties: { $group_type: 'company', $group_key: company, $group_set: { name: company.toUpperCase() } } })
}

const RANGE = dayList('2024-06-01', 8)
const dateRange = { date_from: RANGE[0], date_to: RANGE.at(-1) }
const FROM = Date.parse(`${RANGE[0]}T00:00:00Z`)
const TO = FROM + RANGE.length * DAY
const L = 5
const ev = (id: string) => ({ id, type: 'events', name: id })
const retention = (filter: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  kind: 'RetentionQuery',
  retentionFilter: { period: 'Day', totalIntervals: L, targetEntity: ev('play'), returningEntity: ev('play'), ...filter },
  dateRange,
  ...extra,
})
/** The request PostHog's retention table sends for one cohort row. */
const rowActors = (source: Record<string, unknown>, interval: number, extra: Record<string, unknown> = {}) => ({
  kind: 'ActorsQuery',
  source: { kind: 'InsightActorsQuery', source, interval },
  select: [source.aggregation_group_type_index === undefined ? 'person' : 'group', 'appearances'],
  orderBy: ['length(appearances) DESC', 'actor_id'],
  limit: 1000,
  ...extra,
})

interface Spec {
  mode?: 'recurring' | 'first_time'
  minimumOccurrences?: number
  actorOf?: (e: TestEvent) => string | null
  /** The target event (default play); play is always the returning one. */
  target?: string
}

/** Calendar days: per actor of cohort row `row`, its appearances (0, then each k with enough returns on day row + k). */
function expectedCalendar(row: number, s: Spec): Map<string, number[]> {
  const actorOf = s.actorOf ?? personOf
  const min = s.minimumOccurrences ?? 1
  type Actor = { cohorts: Set<number>; returnsPerDay: Map<number, number>; first?: number }
  const actors = new Map<string, Actor>()
  for (const e of [...events].sort((a, b) => ms(a) - ms(b))) {
    const id = actorOf(e)
    const isTarget = e.event === (s.target ?? 'play')
    if (id === null || (!isTarget && e.event !== 'play')) continue
    const a: Actor = actors.get(id) ?? { cohorts: new Set(), returnsPerDay: new Map() }
    actors.set(id, a)
    if (isTarget) a.first ??= ms(e)
    if (ms(e) < FROM || ms(e) >= TO) continue
    const day = Math.floor((ms(e) - FROM) / DAY)
    if (isTarget && (s.mode ?? 'recurring') === 'recurring') a.cohorts.add(day)
    if (e.event === 'play') a.returnsPerDay.set(day, (a.returnsPerDay.get(day) ?? 0) + 1)
  }
  const out = new Map<string, number[]>()
  for (const [id, a] of actors) {
    if (s.mode === 'first_time' && a.first !== undefined && a.first >= FROM && a.first < TO) a.cohorts.add(Math.floor((a.first - FROM) / DAY))
    if (!a.cohorts.has(row)) continue
    out.set(id, [0, ...Array.from({ length: L - 1 }, (_, i) => i + 1).filter((k) => (a.returnsPerDay.get(row + k) ?? 0) >= min)])
  }
  return out
}

/** 24-hour windows (UTC): t0 the first play in the range; row floor(hours(from, t0) / 24); k = floor(hours(t0, t) / 24) of later plays. */
function expectedRolling(row: number): Map<string, number[]> {
  const hourOf = (t: number) => Math.floor(t / HOUR)
  const byActor = new Map<string, number[]>()
  for (const e of events) {
    if (e.event !== 'play' || ms(e) < FROM || ms(e) >= TO) continue
    byActor.set(personOf(e), [...(byActor.get(personOf(e)) ?? []), ms(e)])
  }
  const out = new Map<string, number[]>()
  for (const [id, times] of byActor) {
    const t0 = Math.min(...times)
    if (Math.floor((hourOf(t0) - hourOf(FROM)) / 24) !== row) continue
    const ks = new Set(times.filter((t) => t >= t0).map((t) => Math.floor((hourOf(t) - hourOf(t0)) / 24)).filter((k) => k > 0 && k < L))
    out.set(id, [0, ...[...ks].sort((a, b) => a - b)])
  }
  return out
}

/** Each returned actor by its `user-N` distinct id (or group key) with its appearances. */
function actorsOf(res: Record<string, any>): Map<string, number[]> {
  return new Map(res.results.map((row: any[]) => [row[0].group_key ?? row[0].distinct_ids.find((d: string) => d.startsWith('user-')), row[1]]))
}
const sortedEntries = (m: Map<string, number[]>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1))

/** The grid's row `row` counts each actor once at 0 and once per appearance k > 0. */
function assertMatchesGrid(grid: Record<string, any>, row: number, actors: Map<string, number[]>) {
  const counted = Array.from({ length: L }, (_, k) => [...actors.values()].filter((a) => a.includes(k)).length)
  assert.deepEqual(grid.results[row].values.map((v: { count: number }) => v.count), counted, `row ${row} of the grid`)
}

let app: TestApp
const seeded = seededApps(events)

testOnEachEngine('retention actors of a cohort row: the persons the row counts, with the days they came back, as PostHog\'s table asks', async (_t, engine) => {
  app = seeded.app(engine)
  const source = retention({})
  const grid = await queryOk(app, source)
  for (const row of [0, 2, 5, 7]) {
    const res = await queryOk(app, rowActors(source, row))
    const expected = expectedCalendar(row, {})
    assert.ok(expected.size > 0, `row ${row} has actors`)
    assert.deepEqual(sortedEntries(actorsOf(res)), sortedEntries(expected), `row ${row}`)
    assertMatchesGrid(grid, row, actorsOf(res))
    assert.deepEqual(res.columns, ['person', 'appearances'])
    assert.equal(res.missing_actors_count, 0)
    // length(appearances) DESC, then the actor's id.
    const order = res.results.map((r: any[]) => [r[1].length, r[0].id])
    assert.deepEqual(order, [...order].sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)))
  }
  // A person merged by $identify is one actor with both distinct ids.
  const merged = (await queryOk(app, rowActors(source, 0))).results.find((r: any[]) => r[0].distinct_ids.includes('anon-0') || r[0].distinct_ids.includes('anon-1'))
  if (merged) assert.equal(merged[0].distinct_ids.filter((d: string) => d.startsWith('user-')).length, 1)
})

testOnEachEngine('retention actors: the newer table\'s day_0..day_4 columns flag the same appearances', async (_t, engine) => {
  app = seeded.app(engine)
  const source = retention({})
  const res = await queryOk(app, rowActors(source, 1, { select: ['person', 'day_0', 'day_1', 'day_2', 'day_3', 'day_4'] }))
  const expected = expectedCalendar(1, {})
  assert.equal(res.results.length, expected.size)
  for (const row of res.results) {
    const id = row[0].distinct_ids.find((d: string) => d.startsWith('user-'))
    assert.deepEqual(row.slice(1), Array.from({ length: L }, (_, k) => (expected.get(id)!.includes(k) ? 1 : 0)), id)
  }
  assert.deepEqual(res.types.slice(1), Array(L).fill('UInt8'))
})

testOnEachEngine('retention actors with first time, minimumOccurrences and 24-hour windows follow the grid\'s rules', async (_t, engine) => {
  app = seeded.app(engine)
  const cases: Array<[string, Record<string, unknown>, (row: number) => Map<string, number[]>]> = [
    ['first time signup', { retentionType: 'retention_first_time', targetEntity: ev('signup') }, (row) => expectedCalendar(row, { mode: 'first_time', target: 'signup' })],
    ['minimumOccurrences 2', { minimumOccurrences: 2 }, (row) => expectedCalendar(row, { minimumOccurrences: 2 })],
    ['24-hour windows', { timeWindowMode: '24_hour_windows' }, expectedRolling],
  ]
  for (const [name, filter, expect] of cases) {
    const source = retention(filter)
    const grid = await queryOk(app, source)
    let seen = 0
    for (const row of [0, 1, 3]) {
      const res = await queryOk(app, rowActors(source, row))
      const expected = expect(row)
      seen += expected.size
      assert.deepEqual(sortedEntries(actorsOf(res)), sortedEntries(expected), `${name}, row ${row}`)
      assertMatchesGrid(grid, row, actorsOf(res))
    }
    assert.ok(seen > 0, `${name} has actors`)
  }
})

testOnEachEngine('retention actors of groups, ordered by the groups\' created_at', async (_t, engine) => {
  app = seeded.app(engine)
  const source = retention({}, { aggregation_group_type_index: 0 })
  const grid = await queryOk(app, source)
  const res = await queryOk(app, rowActors(source, 2))
  const expected = expectedCalendar(2, { actorOf: companyOf })
  assert.deepEqual(sortedEntries(actorsOf(res)), sortedEntries(expected))
  assertMatchesGrid(grid, 2, actorsOf(res))
  assert.deepEqual(res.columns, ['group', 'appearances'])
  const byCreated = await queryOk(app, rowActors(source, 2, { select: ['group', 'created_at'], orderBy: ['created_at ASC'] }))
  assert.deepEqual(byCreated.results.map((r: any[]) => r[0].group_key), CREATED.filter((c) => expected.has(c)))
  for (const [group, createdAt] of byCreated.results) {
    const i = CREATED.indexOf(group.group_key)
    assert.equal(createdAt, `2024-05-20T0${i}:00:00.000Z`)
    assert.equal(group.created_at, createdAt)
    assert.equal(group.properties.name, group.group_key.toUpperCase())
  }
  const newestFirst = await queryOk(app, rowActors(source, 2, { select: ['group', 'created_at'], orderBy: ['created_at DESC'], limit: 2 }))
  assert.deepEqual(newestFirst.results.map((r: any[]) => r[0].group_key), CREATED.filter((c) => expected.has(c)).reverse().slice(0, 2))
  assert.equal(newestFirst.hasMore, expected.size > 2)
})

testOnEachEngine('retention actors refusals name the field', async (_t, engine) => {
  app = seeded.app(engine)
  const source = retention({})
  const cases: Array<[unknown, string]> = [
    [{ kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source } }, 'query.source.interval'],
    [rowActors(source, RANGE.length), 'query.source.interval'],
    [rowActors(source, 0, { select: ['person', 'day_5'] }), 'query.select.1'],
    [rowActors(source, 0, { select: ['person', 'week_0'] }), 'query.select.1'],
    [rowActors(source, 0, { select: ['person', 'event_count'] }), 'query.select.1'],
    [rowActors(retention({ period: 'Fortnight' }), 0), 'query.source.source.retentionFilter.period'],
    [{ kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'play' }], dateRange }, day: RANGE[0] }, select: ['person', 'appearances'] }, 'query.select.1'],
    [{ kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'play' }], dateRange }, day: RANGE[0] }, orderBy: ['length(appearances) DESC'] }, 'query.orderBy.0'],
  ]
  for (const [query, attr] of cases) {
    const res = await postQuery(app, query)
    assert.equal(res.statusCode, 400, `${attr}: ${res.body}`)
    assert.equal(res.json().attr, attr, res.body)
  }
})
