import assert from 'node:assert/strict'
import { test } from 'node:test'
import { testOnEachEngine } from '../helpers/engines.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { captureEvents, postQuery, queryOk, type TestEvent } from '../helpers/query-data.ts'

const events: TestEvent[] = Array.from({ length: 30 }, (_, i) => ({
  event: i % 3 === 0 ? 'signup' : '$pageview',
  distinct_id: `user-${i % 4}`,
  timestamp: new Date(Date.parse('2024-06-01T00:00:00Z') + i * 3_600_000).toISOString(),
  properties: { $browser: i % 2 ? 'Chrome' : 'Safari', n: i, ...(i % 4 === 0 ? { $set: { email: `u${i % 4}@example.com` } } : {}) },
}))

testOnEachEngine('EventsQuery: selected columns, *, person, filters, aggregates, order and pages with hasMore', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, events)
  const newestFirst = [...events].sort((a, b) => b.timestamp.localeCompare(a.timestamp))

  const page = await queryOk(app, { kind: 'EventsQuery', select: ['*', 'event', 'person', 'timestamp', 'properties.$browser'], limit: 5 })
  assert.deepEqual(page.columns, ['*', 'event', 'person', 'timestamp', 'properties.$browser'])
  assert.equal(page.types.length, 5)
  assert.equal(page.hasMore, true)
  assert.equal(page.results.length, 5)
  page.results.forEach((row: any[], i: number) => {
    const e = newestFirst[i]!
    assert.equal(row[0].event, e.event)
    assert.equal(row[0].distinct_id, e.distinct_id)
    assert.equal(row[0].properties.n, e.properties!.n)
    assert.equal(row[1], e.event)
    assert.equal(row[2].distinct_id, e.distinct_id)
    assert.equal(typeof row[2].uuid, 'string')
    assert.equal(Date.parse(row[3]), Date.parse(e.timestamp))
    assert.equal(row[4], e.properties!.$browser)
  })

  const second = await queryOk(app, { kind: 'EventsQuery', select: ['properties.n'], limit: 5, offset: 25 })
  assert.deepEqual(second.results.map((r: string[]) => Number(r[0])), newestFirst.slice(25).map((e) => e.properties!.n))
  assert.equal(second.hasMore, false)

  const counts = await queryOk(app, { kind: 'EventsQuery', select: ['event', 'count()'], orderBy: ['count() DESC'] })
  const expected = Object.entries(events.reduce<Record<string, number>>((m, e) => ({ ...m, [e.event]: (m[e.event] ?? 0) + 1 }), {})).sort((a, b) => b[1] - a[1])
  assert.deepEqual(counts.results, expected)

  const filtered = await queryOk(app, {
    kind: 'EventsQuery', select: ['properties.n'], event: '$pageview', orderBy: ['timestamp ASC'],
    properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }],
    after: '2024-06-01T05:00:00Z', before: '2024-06-01T20:00:00Z',
  })
  const want = events.filter((e) => e.event === '$pageview' && e.properties!.$browser === 'Chrome' && e.timestamp > '2024-06-01T05:00:00.000Z' && e.timestamp < '2024-06-01T20:00:00.000Z')
  assert.deepEqual(filtered.results.map((r: string[]) => Number(r[0])), want.map((e) => e.properties!.n))

  const uniq = await queryOk(app, { kind: 'EventsQuery', select: ['uniq(distinct_id)', 'uniq(person_id)'] })
  assert.deepEqual(uniq.results, [[4, 4]])

  const byPerson = await queryOk(app, { kind: 'EventsQuery', select: ['person.properties.email', 'count()'], orderBy: ['person.properties.email'] })
  assert.ok(byPerson.results.some((r: unknown[]) => r[0] === 'u0@example.com'))
})

test('EventsQuery with HogQL where clauses: each entry a row filter, AND-ed, as PostHog\'s events table sends them', async (t) => {
  const app = await buildTestApp(t)
  await captureEvents(app, events)
  const count = async (where: string[]) => (await queryOk(app, { kind: 'EventsQuery', select: ['count()'], where })).results[0][0]
  const expected = (keep: (e: TestEvent) => boolean) => events.filter(keep).length
  const props = (e: TestEvent) => e.properties as Record<string, unknown>

  assert.equal(await count(["event = 'signup'", "properties.$browser = 'Chrome'"]), expected((e) => e.event === 'signup' && props(e).$browser === 'Chrome'))
  assert.equal(await count(['properties.n > 20']), expected((e) => Number(props(e).n) > 20), 'a number compares as a number, not as text')
  assert.equal(await count(["properties.$browser IN ('Safari', 'Opera') AND NOT distinct_id = 'user-0'"]), expected((e) => props(e).$browser === 'Safari' && e.distinct_id !== 'user-0'))
  assert.equal(await count(["timestamp >= '2024-06-01 12:00:00'", "timestamp < '2024-06-02'"]), expected((e) => e.timestamp >= '2024-06-01T12:00:00' && e.timestamp < '2024-06-02'))
  assert.equal(await count(['properties.n BETWEEN 3 AND 5 OR properties.missing IS NOT NULL']), 3)
  assert.equal(await count(["person.properties.email = 'u0@example.com'"]), expected((e) => e.distinct_id === 'user-0'))
  assert.equal(await count(['1 = 1']), events.length)
  assert.equal(await count(["1 = 'a'"]), 0, 'constants of two types compare, never a failing cast')
  const rows = await queryOk(app, { kind: 'EventsQuery', select: ['event', 'properties.n'], where: ["event = 'signup'"], orderBy: ['timestamp ASC'], limit: 2 })
  assert.deepEqual(rows.results, [['signup', '0'], ['signup', '3']])
})

testOnEachEngine('EventsQuery refuses what it cannot read, naming the entry', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const cases: Array<[unknown, string]> = [
    [{ kind: 'EventsQuery', select: ['event', 'arrayJoin(x)'] }, 'query.select.1'],
    [{ kind: 'EventsQuery', select: [] }, 'query.select'],
    [{ kind: 'EventsQuery', select: ['event'], where: ["event = 'signup'", 'arrayJoin(x) = 1'] }, 'query.where.1'],
    [{ kind: 'EventsQuery', select: ['event'], where: ['nosuchfield = 1'] }, 'query.where.0'],
    [{ kind: 'EventsQuery', select: ['event'], where: ["1 = 'a' AND properties.n = 'x'", 'properties.n > 1 + 1'] }, 'query.where.1'],
    [{ kind: 'EventsQuery', select: ['event'], where: ["event = 'a' ORDER BY event"] }, 'query.where.0'],
    [{ kind: 'EventsQuery', select: ['event'], where: ["timestamp > 'soon'"] }, 'query.where.0'],
    [{ kind: 'EventsQuery', select: ['event'], limit: 0 }, 'query.limit'],
    [{ kind: 'EventsQuery', select: ['*', 'count()'] }, 'query.select.0'],
    [{ kind: 'EventsQuery', select: ['event'], after: 'yesterday-ish' }, 'query.after'],
  ]
  for (const [query, attr] of cases) {
    const res = await postQuery(app, query)
    assert.equal(res.statusCode, 400, `${JSON.stringify(query)}: ${res.body}`)
    assert.equal(res.json().attr, attr, JSON.stringify(query))
  }
})

testOnEachEngine('guards: past the concurrency limit a query is a 429; past the time limit it is interrupted (504 query_timeout)', async (t, engine) => {
  const app = await buildTestApp(t, { engine, env: { TALLY_QUERY_CONCURRENCY: '1', TALLY_QUERY_TIMEOUT_MS: '200' } })
  const blob = 'ab'.repeat(1000)
  await captureEvents(app, Array.from({ length: 40 }, (_, i) => ({ event: 'e', distinct_id: `p${i % 100}`, timestamp: new Date(Date.parse('2024-01-01T00:00:00Z') + i * 60_000).toISOString(), properties: { blob } })))
  // A regex whose RE2 program is large (nested counted repetition) on 2 KB per event: 90-125 ms per
  // row in DuckDB here, so seconds of work, far past the 200 ms limit. DuckDB sees an interrupt only
  // between vectors of 2,048 rows, so these rows are evaluated to the end before the 504 (1,500 rows
  // took two minutes).
  const heavy = {
    kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'e' }], dateRange: { date_from: '2024-01-01', date_to: '2024-01-03' },
    properties: [{ key: 'blob', operator: 'regex', value: '(?:[ab]{0,100}){0,10}c' }],
  }
  let done = false
  const running = postQuery(app, heavy).finally(() => (done = true))
  const statuses: number[] = []
  while (!done) {
    const light = await postQuery(app, { kind: 'EventsQuery', select: ['count()'] })
    statuses.push(light.statusCode)
    if (light.statusCode === 429) {
      assert.equal(light.json().type, 'throttled_error')
      break
    }
  }
  const slow = await running
  assert.ok(statuses.includes(429), `a query beside the running one was refused (${statuses.join(',')})`)
  assert.equal(slow.statusCode, 504, slow.body)
  assert.equal(slow.json().code, 'query_timeout')
  // The interrupted statement freed its slot and connection: the next query runs.
  assert.equal((await postQuery(app, { kind: 'EventsQuery', select: ['count()'] })).statusCode, 200)
})
