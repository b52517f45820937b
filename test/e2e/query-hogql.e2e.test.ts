import assert from 'node:assert/strict'
import { privateApi, strangerWithProject } from '../helpers/private-api.ts'
import { captureEvents, postQuery, queryOk, waitForStored, type TestEvent } from '../helpers/query-data.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'

// One test body, two stacks: each test runs on embedded DuckDB and on ClickHouse (testOnEachEngine).
// Five persons over 2024-06-01..03; anon-5 browses before identifying as user-5. Every expectation
// is computed here from this list, not by SQL.
const BROWSERS = ['Chrome', 'Firefox', 'Chrome', undefined, 'Safari']
const people = BROWSERS.map((browser, i) => ({ id: `user-${i + 1}`, browser, email: `u${i + 1}@example.com` }))
const setEvents: TestEvent[] = people.map((p) => ({ event: '$set', distinct_id: p.id, timestamp: '2024-05-31T12:00:00Z', properties: { $set: { email: p.email } } }))
const pageviews: TestEvent[] = []
people.forEach((p, i) => {
  for (let n = 0; n <= i; n++) {
    // Hours 01 and 23 UTC: on different local days in New York for part of them.
    const at = `2024-06-0${1 + (n % 3)}T${n % 2 === 0 ? '23' : '01'}:30:00Z`
    const distinctId = p.id === 'user-5' && n < 2 ? 'anon-5' : p.id
    pageviews.push({ event: '$pageview', distinct_id: distinctId, timestamp: at, properties: p.browser ? { $browser: p.browser, n } : { n } })
  }
})
const identify: TestEvent = { event: '$identify', distinct_id: 'user-5', timestamp: '2024-06-03T23:59:00Z', properties: { $anon_distinct_id: 'anon-5' } }
const clicks: TestEvent[] = [1, 2, 3].map((n) => ({ event: 'click', distinct_id: `user-${n}`, timestamp: `2024-06-02T10:0${n}:00Z`, properties: { price: n * 10 } }))
const all = [...setEvents, ...pageviews, identify, ...clicks]

const countBy = <T>(items: readonly T[], key: (t: T) => string | null) => {
  const out = new Map<string | null, number>()
  for (const i of items) out.set(key(i), (out.get(key(i)) ?? 0) + 1)
  return out
}
const hogql = (app: TestApp, query: string, values?: Record<string, unknown>) => queryOk(app, { kind: 'HogQLQuery', query, ...(values ? { values } : {}) })

async function seeded(t: Parameters<typeof buildTestApp>[0], engine: Engine) {
  const app = await buildTestApp(t, { engine })
  // Person properties first, so the page views carry them (persons on events).
  await captureEvents(app, setEvents)
  await captureEvents(app, [...pageviews, identify, ...clicks], setEvents.length)
  return app
}

testOnEachEngine('HogQL over captured events: counts, uniq, properties, person properties, days, subqueries', async (t, engine) => {
  const app = await seeded(t, engine)

  const byEvent = await hogql(app, 'SELECT event, count() FROM events GROUP BY event ORDER BY event')
  assert.deepEqual(byEvent.columns, ['event', 'count()'])
  // PostHog's types are ClickHouse's: count() is a UInt64 there (DuckDB's count is a BIGINT).
  assert.deepEqual(byEvent.types, [['event', 'String'], ['count()', engine === 'clickhouse' ? 'UInt64' : 'Int64']])
  assert.deepEqual(byEvent.results, [...countBy(all, (e) => e.event)].sort((a, b) => a[0]!.localeCompare(b[0]!)))
  assert.equal(byEvent.hogql, 'SELECT event, count() FROM events GROUP BY event ORDER BY event ASC LIMIT 100')

  const uniq = await hogql(app, 'select uniq(distinct_id), uniqExact(distinct_id) as u from events')
  const ids = new Set(all.map((e) => e.distinct_id)).size
  assert.deepEqual(uniq.results, [[ids, ids]])
  assert.deepEqual(uniq.columns, ['uniq(distinct_id)', 'u'])

  const browsers = await hogql(app, `SELECT properties.$browser, count() AS c FROM events WHERE event = '$pageview' GROUP BY properties.$browser ORDER BY c DESC, properties.$browser`)
  const expectedBrowsers = [...countBy(pageviews, (e) => (e.properties?.$browser as string) ?? null)]
    .sort((a, b) => b[1] - a[1] || (a[0] === null ? 1 : b[0] === null ? -1 : a[0].localeCompare(b[0])))
  assert.deepEqual(browsers.columns, ['properties.$browser', 'c'])
  assert.deepEqual(browsers.results, expectedBrowsers)
  const bracket = await hogql(app, `SELECT properties['$browser'], count() AS c FROM events WHERE event = '$pageview' GROUP BY 1 ORDER BY c DESC, 1`)
  assert.deepEqual(bracket.results, expectedBrowsers)

  const emails = await hogql(app, `select person.properties.email, count() from events where event = {ev} group by 1 order by 1`, { ev: '$pageview' })
  const personOf = (id: string) => id.replace('anon-', 'user-')
  const expectedEmails = [...countBy(pageviews.filter((e) => !e.distinct_id.startsWith('anon-')), (e) => people.find((p) => p.id === personOf(e.distinct_id))!.email)].sort()
  assert.deepEqual(emails.results.filter((r: unknown[]) => r[0] !== null), expectedEmails)

  const persons = await hogql(app, 'select uniq(person_id) from events')
  assert.deepEqual(persons.results, [[people.length]], 'anon-5 merged into user-5 through the override')

  // The persons table: one row per person after merges, with their newest properties.
  const personRows = await hogql(app, 'select properties.email, created_at from persons order by properties.email')
  assert.deepEqual(personRows.results.map((r: unknown[]) => r[0]), people.map((p) => p.email).sort())
  const firstSeen = (id: string) => all.filter((e) => personOf(e.distinct_id) === id).map((e) => e.timestamp).sort()[0]!
  assert.deepEqual(personRows.results.map((r: unknown[]) => Date.parse(String(r[1]))), people.map((p) => p.email).sort().map((m) => Date.parse(firstSeen(people.find((p) => p.email === m)!.id))))
  assert.deepEqual((await hogql(app, 'select count() from persons')).results, [[people.length]])
  const byPerson = await hogql(app, `select p.properties.email, count() from events e join persons p on e.person_id = p.id where e.event = 'click' group by 1 order by 1`)
  assert.deepEqual(byPerson.results, clicks.map((c) => [people.find((p) => p.id === c.distinct_id)!.email, 1]))

  const sum = await hogql(app, `select sum(properties.price), avg(properties.price), max(toFloat(properties.price)) from events where event = 'click' and properties.price > 10`)
  assert.deepEqual(sum.results, [[50, 25, 30]])

  const days = await hogql(app, `select toStartOfDay(timestamp) as day, count() from events where event = '$pageview' group by day order by day`)
  const expectedDays = [...countBy(pageviews, (e) => e.timestamp.slice(0, 10))].sort()
  assert.deepEqual(days.results, expectedDays.map(([d, n]) => [`${d}T00:00:00+00:00`, n]))
  assert.deepEqual(days.types[0], ['day', "DateTime64(6, 'UTC')"])

  const heavy = await hogql(app, `select count() from (select distinct_id, count() as c from events where event = '$pageview' group by distinct_id) where c >= 2`)
  assert.deepEqual(heavy.results, [[[...countBy(pageviews, (e) => e.distinct_id).values()].filter((n) => n >= 2).length]])

  const inSub = await hogql(app, `select count() from events where event = 'click' and distinct_id in (select distinct_id from events where properties.$browser = 'Chrome')`)
  assert.deepEqual(inSub.results, [[clicks.filter((c) => people.find((p) => p.id === c.distinct_id)?.browser === 'Chrome').length]])

  const after = await hogql(app, `select count() from events where timestamp >= '2024-06-02' and timestamp < now() - interval 7 day and event != '$set'`)
  assert.deepEqual(after.results, [[all.filter((e) => e.timestamp >= '2024-06-02' && e.event !== '$set').length]])

  const joined = await hogql(app, `select e.distinct_id, s.c from events e left join (select distinct_id, count() as c from events where event = 'click' group by distinct_id) s on e.distinct_id = s.distinct_id where e.event = '$pageview' group by e.distinct_id, s.c order by e.distinct_id`)
  const clickCount = countBy(clicks, (c) => c.distinct_id)
  const viewers = [...new Set(pageviews.map((e) => e.distinct_id))].sort()
  assert.deepEqual(joined.columns, ['distinct_id', 'c'])
  assert.deepEqual(joined.results, viewers.map((id) => [id, clickCount.get(id) ?? null]))

  const star = await hogql(app, `select * from events where event = 'click' order by timestamp limit 1`)
  assert.deepEqual(star.columns, ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at'])
  const [row] = star.results
  assert.deepEqual([row[1], JSON.parse(row[2]).price, row[3], row[4]], ['click', 10, '2024-06-02T10:01:00+00:00', 'user-1'])

  const noTable = await hogql(app, `select 1 + 1 as two, concat('a', toString(2)), dateDiff('day', toDate('2024-06-01'), toDate('2024-06-03'))`)
  assert.deepEqual(noTable.results, [[2, 'a2', 2]])

  const cased = await hogql(app, `select case when properties.$browser ilike 'chrome' then 'c' else 'other' end as b, countIf(event = '$pageview') from events where event in ('$pageview', 'click') group by b order by b limit 1`)
  assert.deepEqual(cased.results, [['c', pageviews.filter((e) => e.properties?.$browser === 'Chrome').length]])
})

testOnEachEngine('HogQL days in the project time zone (America/New_York)', async (t, engine) => {
  const app = await seeded(t, engine)
  const patched = await privateApi(app).patch('/', { timezone: 'America/New_York' })
  assert.equal(patched.statusCode, 200, patched.body)
  const days = await hogql(app, `select toStartOfDay(timestamp) as day, count() from events where event = '$pageview' group by day order by day`)
  const local = (ts: string) => new Date(ts).toLocaleDateString('en-CA', { timeZone: 'America/New_York' })
  const expected = [...countBy(pageviews, (e) => local(e.timestamp))].sort()
  assert.deepEqual(days.results, expected.map(([d, n]) => [`${d}T00:00:00-04:00`, n]))
  // 01:30 EDT and 01:30 EST on the fall-back day: two hours, as two instants.
  await captureEvents(app, ['2024-11-03T05:30:00Z', '2024-11-03T06:30:00Z', '2024-11-03T06:40:00Z'].map((ts) => ({ event: 'late', distinct_id: 'user-1', timestamp: ts })), all.length)
  const hours = await hogql(app, `select toStartOfHour(timestamp) as h, count() from events where event = 'late' group by h order by h`)
  assert.deepEqual(hours.results, [['2024-11-03T01:00:00-04:00', 1], ['2024-11-03T01:00:00-05:00', 2]])
  const wall = await hogql(app, `select count() from events where event = '$pageview' and timestamp < '2024-06-01 22:00:00'`)
  assert.deepEqual(wall.results, [[pageviews.filter((e) => Date.parse(e.timestamp) < Date.parse('2024-06-02T02:00:00Z')).length]])
})

const REFUSED: Array<[string, RegExp]> = [
  ['SELECT count() FROM system.tables', /Unknown table "system.tables"/],
  ['SELECT * FROM information_schema.tables', /Unknown table "information_schema.tables"/],
  ['SELECT * FROM duckdb_tables()', /Table functions are not allowed/],
  [`SELECT * FROM read_csv('/etc/passwd')`, /Table functions are not allowed \("read_csv/],
  [`SELECT * FROM '/etc/passwd'`, /Reading files is not allowed/],
  [`SELECT read_csv('/etc/passwd')`, /Unsupported function "read_csv"/],
  ['SELECT 1; DROP TABLE events', /Only one statement/],
  [`ATTACH '/tmp/other.duckdb' AS other`, /Only SELECT queries are allowed, found "ATTACH"/],
  [`COPY events TO '/tmp/x.csv'`, /Only SELECT queries are allowed, found "COPY"/],
  ['SET threads = 1', /Only SELECT queries are allowed, found "SET"/],
  ['PRAGMA database_list', /Only SELECT queries are allowed/],
  ['SELECT count() FROM events SETTINGS max_execution_time = 1000', /SETTINGS clauses are not allowed/],
  ['SELECT count() FROM events WHERE project_id = 1', /Unknown field "project_id"/],
  ['SELECT count() FROM persons WHERE team_id = 2', /Unknown field "team_id"/],
  ['SELECT count() FROM groups', /Unknown table "groups"/],
  ['SELECT count() FROM events e JOIN other.events o ON e.uuid = o.uuid', /Unknown table "other.events"/],
  ['SELECT event + FROM events', /Expected an expression/],
]

testOnEachEngine('HogQL refuses anything but a read of the project\'s own tables, in PostHog\'s error shape', async (t, engine) => {
  const app = await seeded(t, engine)
  for (const [query, detail] of REFUSED) {
    const res = await postQuery(app, { kind: 'HogQLQuery', query })
    assert.equal(res.statusCode, 400, `${query}: ${res.body}`)
    const body = res.json()
    assert.equal(body.type, 'validation_error', query)
    assert.equal(body.attr, 'query.query', query)
    assert.match(body.detail, detail, query)
  }
  const missing = await postQuery(app, { kind: 'HogQLQuery' })
  assert.equal(missing.statusCode, 400)
  assert.equal(missing.json().attr, 'query.query')
  // Statements the store refuses (an aggregate inside an aggregate, a column neither grouped nor aggregated) are the client's errors too.
  const refusedByStore = engine === 'clickhouse'
    ? [/The query cannot run: Code: 184, .*Aggregate function count\(\) is found inside another aggregate function/, /The query cannot run: Code: 215, .*is not under aggregate function/]
    : [/The query cannot run: Binder Error/, /The query cannot run: Binder Error/]
  for (const [i, query] of ['select count(count()) from events', 'select event, count() from events'].entries()) {
    const bad = await postQuery(app, { kind: 'HogQLQuery', query })
    assert.equal(bad.statusCode, 400, bad.body)
    assert.equal(bad.json().attr, 'query.query')
    assert.match(bad.json().detail, refusedByStore[i]!)
  }
  // Nothing above ran: the events are all still there.
  await waitForStored(app, all.length)
})

testOnEachEngine('HogQL never sees another project\'s events', async (t, engine) => {
  const app = await seeded(t, engine)
  const other = await strangerWithProject(app)
  const token = (await app.services.projects.listProjects()).find((p) => p.id === other.projectId)!.apiToken
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: token, batch: [1, 2, 3].map((n) => ({ event: 'secret', distinct_id: `other-${n}`, timestamp: '2024-06-02T00:00:00Z', properties: { $browser: 'Chrome' } })) } })
  assert.equal(res.statusCode, 200, res.body)
  const theirs = { ...app, auth: other.headers as { authorization: string }, projectId: other.projectId }
  for (let i = 0; i < 400 && (await hogql(theirs, 'select count() from events')).results[0][0] < 3; i++) await new Promise((r) => setTimeout(r, 25))
  assert.deepEqual((await hogql(theirs, 'select event, count() from events group by event')).results, [['secret', 3]])

  assert.deepEqual((await hogql(app, 'select count() from events')).results, [[all.length]])
  assert.deepEqual((await hogql(app, `select count() from events where event = 'secret' or distinct_id like 'other-%'`)).results, [[0]])
  const joined = await hogql(app, `select count() from events e inner join (select distinct_id from events where event = 'secret') s on e.distinct_id = s.distinct_id`)
  assert.deepEqual(joined.results, [[0]])
  const nested = await hogql(app, `select count() from events where distinct_id in (select distinct_id from (select distinct_id from events where properties.$browser = 'Chrome'))`)
  assert.deepEqual(nested.results, [[all.filter((e) => people.find((p) => p.id === e.distinct_id)?.browser === 'Chrome').length]])
})
