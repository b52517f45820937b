import assert from 'node:assert/strict'
import { after, before, type TestContext } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { ENGINES, testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { skipWithoutClickHouse } from '../helpers/clickhouse.ts'
import { privateApi } from '../helpers/private-api.ts'
import { captureEvents, postQuery, queryOk, type TestEvent } from '../helpers/query-data.ts'
import { CHANNEL_CASES, CURRENT, DATE_RANGE, PREVIOUS, webDataSet, ZONE } from '../helpers/web-data.ts'
import { referenceOverview, referenceSessions, referenceTable, type RefSession } from '../helpers/web-reference.ts'

// WebOverviewQuery and WebStatsTableQuery through POST /query/ on both engines, against answers
// computed in JavaScript from the same events (test/helpers/web-reference.ts).
const data = webDataSet()
const all = [...data.events, ...data.late]

const apps = {} as Record<Engine, TestApp>
const cleanups: Array<() => Promise<void>> = []
before(async () => {
  for (const engine of ENGINES) {
    if (engine === 'clickhouse' && skipWithoutClickHouse()) continue
    const app = await buildTestApp({ after: (fn: () => Promise<void>) => cleanups.push(fn) } as unknown as TestContext, { engine })
    assert.equal((await privateApi(app).patch('/', { timezone: ZONE })).statusCode, 200)
    await captureEvents(app, data.events)
    await captureEvents(app, data.late, data.events.length)
    apps[engine] = app
  }
})
after(async () => {
  for (const fn of cleanups) await fn()
})

const overview = (extra: Record<string, unknown> = {}) => ({ kind: 'WebOverviewQuery', dateRange: DATE_RANGE, properties: [], ...extra })
const table = (breakdownBy: string, extra: Record<string, unknown> = {}) => ({ kind: 'WebStatsTableQuery', breakdownBy, dateRange: DATE_RANGE, properties: [], limit: 1000, ...extra })
const close = (actual: number | null, expected: number | null, what: string) => {
  if (expected === null) return assert.equal(actual, null, what)
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-9, `${what}: ${actual} vs ${expected}`)
}

testOnEachEngine('overview: visitors, views, sessions, duration and bounce rate of the sessions that started in the range', async (_t, engine) => {
  const body = await queryOk(apps[engine], overview())
  const ref = referenceOverview(all, CURRENT, null).current
  assert.deepEqual(body.results.map((r: any) => [r.key, r.kind]), [['visitors', 'unit'], ['views', 'unit'], ['sessions', 'unit'], ['session duration', 'duration_s'], ['bounce rate', 'percentage']])
  const [visitors, views, sessions, duration, bounce] = body.results
  assert.equal(visitors.value, ref.visitors)
  assert.equal(views.value, ref.views)
  assert.equal(sessions.value, ref.sessions)
  close(duration.value, ref.duration, 'session duration')
  close(bounce.value, ref.bounceRate! * 100, 'bounce rate')
  assert.equal(bounce.isIncreaseBad, true)
  for (const r of body.results) assert.equal(r.previous, null)
  assert.equal(body.dateFrom, '2024-06-03 00:00:00')
  assert.equal(body.dateTo, '2024-06-05 23:59:59')
})

testOnEachEngine('overview with compare: the previous period and the change, rounded as Python rounds', async (_t, engine) => {
  const body = await queryOk(apps[engine], overview({ compareFilter: { compare: true } }))
  const ref = referenceOverview(all, CURRENT, PREVIOUS)
  const prev = ref.previous!
  const expected = [prev.visitors, prev.views, prev.sessions, prev.duration, prev.bounceRate! * 100]
  body.results.forEach((r: any, i: number) => close(r.previous, expected[i]!, `${r.key} previous`))
  for (const r of body.results) {
    const pct = (100 * (r.value - r.previous)) / r.previous
    const half = Math.abs(pct % 1) === 0.5
    assert.equal(r.changeFromPreviousPct, half ? 2 * Math.round(pct / 2) : Math.round(pct), r.key)
  }
})

testOnEachEngine('sessions across local midnight and at the range edges count once, by where they start', async (_t, engine) => {
  const sessions = [...referenceSessions(all).values()]
  const of = (person: string) => sessions.find((s) => all.some((e) => e.distinct_id === person && e.properties?.$session_id === s.id))!
  // 23:50 on 3 June to 00:15 on 4 June (Amsterdam): one session of 1,500 s; the one starting at 23:58
  // on 5 June keeps its view after the range in its duration (300 s).
  assert.equal(of('midnight').duration, 1500)
  assert.equal(of('edge-after').duration, 300)
  const table = await queryOk(apps[engine], { kind: 'WebStatsTableQuery', breakdownBy: 'InitialReferringDomain', dateRange: DATE_RANGE, compareFilter: { compare: true }, limit: 1000 })
  const ref = referenceTable(all, CURRENT, (_e, s) => s.props.$referring_domain ?? null, { otherPeriod: PREVIOUS })
  const prevRef = referenceTable(all, PREVIOUS, (_e, s) => s.props.$referring_domain ?? null, { otherPeriod: CURRENT })
  const google = table.results.find((r: any) => r[0] === 'www.google.com')
  // edge-before (starts 23:55 on 2 June) counts in the previous period, edge-after (23:58 on 5 June) in the current one.
  assert.deepEqual(google[1], [ref.get('"www.google.com"')!.visitors, prevRef.get('"www.google.com"')?.visitors ?? 0])
  assert.deepEqual(google[2], [ref.get('"www.google.com"')!.views, prevRef.get('"www.google.com"')?.views ?? 0])
})

/** Compares a table with the reference of one breakdown, value by value. */
async function checkTable(app: TestApp, breakdownBy: string, value: (e: TestEvent, s: RefSession) => unknown, opts: { bounce?: boolean; keepNull?: boolean } = {}) {
  const body = await queryOk(app, table(breakdownBy, { includeBounceRate: opts.bounce ?? false }))
  const ref = referenceTable(all, CURRENT, value, { keepNull: opts.keepNull })
  const got = new Map(body.results.map((r: any[]) => [JSON.stringify(r[0]), r]))
  assert.deepEqual([...got.keys()].sort(), [...ref.keys()].sort(), `${breakdownBy} values`)
  for (const [key, r] of ref) {
    const row = got.get(key) as any[]
    assert.deepEqual([row[1], row[2]], [[r.visitors, null], [r.views, null]], `${breakdownBy} ${key}`)
    if (opts.bounce) close(row[3][0], r.bounceRate, `${breakdownBy} ${key} bounce rate`)
  }
  return body
}

testOnEachEngine('stats table: PostHog\'s columns, rows ordered by visitors then views, paged with hasMore', async (_t, engine) => {
  const body = await checkTable(apps[engine], 'Browser', (e) => e.properties?.$browser ?? null)
  assert.deepEqual(body.columns, ['context.columns.breakdown_value', 'context.columns.visitors', 'context.columns.views', 'context.columns.ui_fill_fraction', 'context.columns.cross_sell'])
  const visitors = body.results.map((r: any[]) => r[1][0])
  assert.deepEqual(visitors, [...visitors].sort((a: number, b: number) => b - a))
  const total = visitors.reduce((a: number, b: number) => a + b, 0)
  body.results.forEach((r: any[]) => close(r[3], r[1][0] / total, 'fill fraction'))
  const paged = await queryOk(apps[engine], table('Browser', { limit: 1, offset: 1 }))
  assert.deepEqual(paged.results, [body.results[1]])
  assert.equal(paged.hasMore, true)
})

testOnEachEngine('stats table: event breakdowns (device, language, country, region, city, timezone)', async (_t, engine) => {
  const app = apps[engine]
  await checkTable(app, 'DeviceType', (e) => e.properties?.$device_type ?? null, { bounce: true })
  await checkTable(app, 'Country', (e) => e.properties?.$geoip_country_code ?? null)
  await checkTable(app, 'City', (e) => (e.properties?.$geoip_city_name ? [e.properties.$geoip_country_code, e.properties.$geoip_city_name] : null))
  await checkTable(app, 'Region', (e) => (e.properties?.$geoip_subdivision_1_code ? [e.properties.$geoip_country_code, e.properties.$geoip_subdivision_1_code, e.properties.$geoip_subdivision_1_name] : null))
  await checkTable(app, 'Timezone', (e) => -Number(e.properties?.$timezone_offset) / 60)
  const lang = await queryOk(app, table('Language'))
  assert.deepEqual(lang.results.map((r: any[]) => r[0]).sort(), ['de-DE', 'en-US', 'nl-NL'])
})

testOnEachEngine('stats table: session breakdowns (entry and exit page, referring domain, UTM source)', async (_t, engine) => {
  const app = apps[engine]
  await checkTable(app, 'InitialPage', (_e, s) => s.entryPathname, { bounce: true })
  await checkTable(app, 'ExitPage', (_e, s) => s.endPathname)
  await checkTable(app, 'InitialReferringDomain', (_e, s) => s.props.$referring_domain ?? null)
  const utm = await checkTable(app, 'InitialUTMSource', (_e, s) => s.props.utm_source ?? null, { keepNull: true })
  assert.ok(utm.results.some((r: any[]) => r[0] === null), 'sessions without utm_source are a row of their own')
})

testOnEachEngine('a session whose first page view arrived late has that page as its entry', async (_t, engine) => {
  const body = await queryOk(apps[engine], table('InitialPage'))
  const landing = body.results.find((r: any[]) => r[0] === '/landing')
  assert.ok(landing, 'the late first view makes /landing an entry page')
  assert.deepEqual(landing[1], [1, null])
})

testOnEachEngine('pages: views by $pathname, bounce rate of the sessions entering on each page', async (_t, engine) => {
  const app = apps[engine]
  const body = await checkTable(app, 'Page', (e) => e.properties?.$pathname ?? null)
  assert.ok(body.columns.includes('context.columns.bounce_rate') === false)
  const withBounce = await queryOk(app, table('Page', { includeBounceRate: true }))
  const entered = referenceTable(all, CURRENT, (_e, s) => s.entryPathname)
  assert.ok(withBounce.results.some((r: any[]) => r[3][0] !== null))
  for (const r of withBounce.results) close(r[3][0], entered.get(JSON.stringify(r[0]))?.bounceRate ?? null, `bounce rate of ${r[0]}`)
})

testOnEachEngine('channel types by PostHog\'s rules and precedence', async (_t, engine) => {
  const body = await queryOk(apps[engine], table('InitialChannelType'))
  const ref = referenceTable(all, CURRENT, (_e, s) => CHANNEL_CASES[data.channelOf.get(s.id)!]![1])
  const got = new Map(body.results.map((r: any[]) => [r[0], r[1][0]]))
  for (const [key, r] of ref) assert.equal(got.get(JSON.parse(key)), r.visitors, `${JSON.parse(key)} visitors`)
  assert.equal(got.size, ref.size)
  assert.ok(ref.size >= 15, 'most channel types are present')
})

testOnEachEngine('filters: an event property filter narrows the events counted', async (_t, engine) => {
  const properties = [{ key: '$browser', operator: 'exact', value: 'Firefox', type: 'event' }]
  const body = await queryOk(apps[engine], overview({ properties }))
  const ref = referenceOverview(all, CURRENT, null, (e) => e.properties?.$browser === 'Firefox').current
  assert.deepEqual(body.results.slice(0, 3).map((r: any) => r.value), [ref.visitors, ref.views, ref.sessions])
})

testOnEachEngine('bad input: an unknown breakdown and an unsupported one are 400s naming breakdownBy', async (_t, engine) => {
  for (const breakdownBy of ['Nope', 'FrustrationMetrics']) {
    const res = await postQuery(apps[engine], table(breakdownBy))
    assert.equal(res.statusCode, 400, res.body)
    assert.equal(res.json().attr, 'query.breakdownBy')
  }
})
