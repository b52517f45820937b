import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { refActorCounts, refActors, refPaths, type RefEvent, type RefFilter } from '../helpers/paths-reference.ts'
import { captureEvents, postQuery, queryOk, seededRandom, type TestEvent } from '../helpers/query-data.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'

// PathsQuery through POST /query/ on both engines, against PostHog's runner redone in plain JS over
// arrays (test/helpers/paths-reference.ts), over a generated fixture: sessions split by 30-minute
// gaps, repeated pages, trailing slashes, screens, custom and $-events, test traffic, ids in URLs.
const rand = seededRandom(7)
const BASE = Date.parse('2024-03-04T00:00:00Z')
const MIN = 60_000
const PAGES = ['/', '/about/', '/pricing', '/product/17', '/product/42', '/docs', '/signup']
const SCREENS = ['Home', 'Cart', 'Settings']
const CUSTOM = ['signed_up', 'purchased']
const events: TestEvent[] = []
const ref: RefEvent[] = []
for (let p = 0; p < 45; p++) {
  let t = BASE + Math.floor(rand() * 3 * 86_400) * 1000
  const host = p % 9 === 0 ? 'localhost' : 'app.test'
  const n = 3 + Math.floor(rand() * 14)
  for (let i = 0; i < n; i++) {
    t += rand() < 0.15 ? (31 + Math.floor(rand() * 90)) * MIN : (10 + Math.floor(rand() * 600)) * 1000
    const r = rand()
    const repeat = rand() < 0.2 && ref.length > 0 && ref[ref.length - 1]!.person === `p${p}`
    const last = ref[ref.length - 1]
    let event: string
    let props: Record<string, unknown>
    if (repeat) { event = last!.event; props = { ...last!.props } }
    else if (r < 0.6) { event = '$pageview'; props = { $current_url: `https://app.test${PAGES[Math.floor(rand() * PAGES.length)]}` } }
    else if (r < 0.72) { event = '$screen'; props = rand() < 0.1 ? {} : { $screen_name: SCREENS[Math.floor(rand() * SCREENS.length)] } }
    else if (r < 0.88) { event = CUSTOM[Math.floor(rand() * CUSTOM.length)]!; props = {} }
    else { event = '$autocapture'; props = {} }
    props = { ...props, $host: host }
    const uid = crypto.randomUUID()
    events.push({ event, distinct_id: `p${p}`, timestamp: new Date(t).toISOString(), properties: props })
    ref.push({ person: `p${p}`, t, event, props, uid })
  }
}
const dateRange = { date_from: '2024-03-01', date_to: '2024-03-20' }
const inRange = ref.filter((e) => e.t >= Date.parse('2024-03-01T00:00:00Z') && e.t < Date.parse('2024-03-21T00:00:00Z'))

async function seeded(t: TestContext, engine: Engine): Promise<TestApp> {
  const app = await buildTestApp(t, { engine, env: { TALLY_LOG_LEVEL: 'silent' } })
  await captureEvents(app, events)
  return app
}

const paths = (filter: object, extra: Record<string, unknown> = {}) => ({ kind: 'PathsQuery', dateRange, pathsFilter: filter, ...extra })

/** The persons behind a path edge through the actors query, as distinct ids (one per person here). */
async function actorsOf(app: TestApp, filter: object): Promise<string[]> {
  const body = await queryOk(app, { kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source: paths(filter) }, select: ['actor'] })
  return body.results.map((r: any[]) => r[0].distinct_ids[0]).sort()
}

function assertEdges(actual: any[], expected: ReturnType<typeof refPaths>, what: string) {
  assert.deepEqual(actual.map((e) => [e.source, e.target, e.value]), expected.map((e) => [e.source, e.target, e.value]), what)
  for (const [i, e] of expected.entries()) assert.ok(Math.abs(actual[i].average_conversion_time - e.average_conversion_time) < 1e-6, `${what}: ${e.source} -> ${e.target} time`)
}

testOnEachEngine('paths agree with PostHog\'s runner: event types, start and end points, limits, weights, cleaning and groupings', async (t, engine) => {
  const app = await seeded(t, engine)
  const cases: Array<[string, RefFilter]> = [
    ['all events, defaults', {}],
    ['page views', { includeEventTypes: ['$pageview'] }],
    ['screens and custom events', { includeEventTypes: ['$screen', 'custom_event'] }],
    ['everything but autocapture, one page excluded', { includeEventTypes: ['$pageview', '$screen', 'custom_event'], excludeEvents: ['https://app.test/docs'] }],
    ['from a start point (its trailing slash dropped)', { includeEventTypes: ['$pageview'], startPoint: 'https://app.test/about/' }],
    ['to an end point, 3 steps', { includeEventTypes: ['$pageview'], endPoint: 'https://app.test/signup', stepLimit: 3 }],
    ['between a start and an end point', { includeEventTypes: ['$pageview', 'custom_event'], startPoint: 'https://app.test', endPoint: 'purchased', stepLimit: 4 }],
    ['between a start and an end point, longer ones cut with ... (3 steps)', { startPoint: 'https://app.test', endPoint: 'purchased', stepLimit: 3 }],
    ['between a start and an end point, longer ones cut to ... (2 steps)', { startPoint: 'Home', endPoint: 'signed_up', stepLimit: 2 }],
    ['step limit 7, edge limit 12', { stepLimit: 7, edgeLimit: 12 }],
    ['edge weights between 2 and 5', { includeEventTypes: ['$pageview'], minEdgeWeight: 2, maxEdgeWeight: 5 }],
    ['cleaning rules in order, with a group', { includeEventTypes: ['$pageview'], cleaning: [{ regex: '/product/\\d+', alias: '/product/:id' }, { regex: '^https://([a-z]+)\\.test', alias: '\\1:' }] }],
    ['groupings with wildcards', { includeEventTypes: ['$pageview'], pathGroupings: ['*/product/*', '*.test/do*'] }],
  ]
  for (const [what, f] of cases) {
    const { cleaning, ...filter } = f
    const body = await queryOk(app, paths({ ...filter, ...(cleaning ? { localPathCleaningFilters: cleaning } : {}) }))
    const expected = refPaths(inRange, f)
    assert.ok(expected.length > 0, `${what}: the fixture walks some path`)
    if (what.includes('cut')) assert.ok(expected.some((e) => e.target.endsWith('_...')), `${what}: some path is cut`)
    assertEdges(body.results, expected, what)
  }
})

testOnEachEngine('the persons behind an edge, from a node, to a node and dropping off at one', async (t, engine) => {
  const app = await seeded(t, engine)
  const f: RefFilter = { includeEventTypes: ['$pageview', 'custom_event'] }
  const edges = refPaths(inRange, f)
  const edge = edges[0]!
  assert.deepEqual(await actorsOf(app, { ...f, pathStartKey: edge.source, pathEndKey: edge.target }), refActors(inRange, f, { start: edge.source, end: edge.target }), 'an edge')
  assert.deepEqual(await actorsOf(app, { ...f, pathEndKey: edges[3]!.target }), refActors(inRange, f, { end: edges[3]!.target }), 'to a node')
  assert.deepEqual(await actorsOf(app, { ...f, pathStartKey: edges[1]!.source }), refActors(inRange, f, { start: edges[1]!.source }), 'from a node')
  const dropoff = edges[2]!.target
  const dropped = refActors(inRange, f, { dropoff })
  assert.ok(dropped.length > 0, 'someone drops off there')
  assert.deepEqual(await actorsOf(app, { ...f, pathDropoffKey: dropoff }), dropped, 'dropped off')
  // As the web app's persons list asks: persons with their step counts, busiest first, then a search.
  // A node some person reached in more than one session.
  const busy = edges.map((e) => e.target).find((n) => [...refActorCounts(inRange, f, { end: n }).values()].some((c) => c > 1))!
  assert.ok(busy, 'someone reaches a node twice')
  const source = { kind: 'InsightActorsQuery', source: paths({ ...f, pathEndKey: busy }) }
  const listed = await queryOk(app, { kind: 'ActorsQuery', source, select: ['person', 'event_count'], orderBy: ['event_count DESC', 'person ASC'], limit: 100 })
  const counts = refActorCounts(inRange, f, { end: busy })
  assert.deepEqual(listed.columns, ['person', 'event_count'])
  assert.deepEqual(new Map(listed.results.map((r: any[]) => [r[0].distinct_ids[0], r[1]])), counts, 'step counts per person')
  assert.deepEqual(listed.results.map((r: any[]) => r[1]), [...counts.values()].sort((a, b) => b - a), 'busiest first')
  const one = [...counts.keys()][0]!
  const searched = await queryOk(app, { kind: 'ActorsQuery', source, select: ['person'], search: one })
  // The search is a substring of the distinct id (p3 finds p37 too), within the path's persons.
  assert.deepEqual(searched.results.map((r: any[]) => r[0].distinct_ids[0]).sort(), [...counts.keys()].filter((d) => d.includes(one)).sort(), 'search by distinct id')
})

testOnEachEngine('project settings: test accounts filtered out, project cleaning rules applied with pathReplacements, the range read in the project\'s zone', async (t, engine) => {
  const app = await seeded(t, engine)
  const patch = (payload: Record<string, unknown>) => app.http.inject({ method: 'PATCH', url: `/api/projects/${app.projectId}/`, headers: app.auth, payload })
  const res = await patch({
    test_account_filters: [{ key: '$host', operator: 'is_not', value: ['localhost'], type: 'event' }],
    path_cleaning_filters: [{ regex: '/product/\\d+', alias: '/product/:id' }],
  })
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual(res.json().path_cleaning_filters, [{ regex: '/product/\\d+', alias: '/product/:id' }])
  const f: RefFilter = { includeEventTypes: ['$pageview'] }
  const real = inRange.filter((e) => e.props.$host !== 'localhost')
  assertEdges((await queryOk(app, paths(f, { filterTestAccounts: true }))).results, refPaths(real, f), 'test accounts filtered')
  const cleaned: RefFilter = { ...f, cleaning: [{ regex: '/product/\\d+', alias: '/product/:id' }, { regex: 'https://', alias: '' }] }
  assertEdges((await queryOk(app, paths({ ...f, pathReplacements: true, localPathCleaningFilters: [{ regex: 'https://', alias: '' }] }))).results, refPaths(inRange, cleaned), 'project rules, then the query\'s')
  assertEdges((await queryOk(app, paths(f, { properties: [{ key: '$host', operator: 'exact', value: 'localhost', type: 'event' }] }))).results, refPaths(inRange.filter((e) => e.props.$host === 'localhost'), f), 'a property filter')
  // New York is UTC-5 before 2024-03-10: 03-05..03-06 local is [03-05T05:00Z, 03-07T05:00Z).
  assert.equal((await patch({ timezone: 'America/New_York' })).statusCode, 200)
  const local = ref.filter((e) => e.t >= Date.parse('2024-03-05T05:00:00Z') && e.t < Date.parse('2024-03-07T05:00:00Z'))
  assertEdges((await queryOk(app, paths(f, { dateRange: { date_from: '2024-03-05', date_to: '2024-03-06' } }))).results, refPaths(local, f), 'range in the project zone')
})

testOnEachEngine('PostHog\'s current-url case: first steps, repeats at one instant, an empty range; bad filters are 400s naming the field', async (t, engine) => {
  const app = await buildTestApp(t, { engine, env: { TALLY_LOG_LEVEL: 'silent' } })
  const pv = (d: string, url: string, ts: string): TestEvent => ({ event: '$pageview', distinct_id: d, timestamp: ts.replace(' ', 'T') + 'Z', properties: { $current_url: url } })
  await captureEvents(app, [
    // person_2a and person_2b are one person, as in PostHog's test (merged outside the range read).
    { event: '$identify', distinct_id: 'person_2b', timestamp: '2012-01-02T00:00:00Z', properties: { $anon_distinct_id: 'person_2a' } },
    pv('fake', '/', '2012-01-01 03:21:34'), pv('fake', '/about', '2012-01-01 03:21:34'),
    pv('person_1', '/', '2012-01-14 03:21:34'), pv('person_1', '/about', '2012-01-14 03:28:34'),
    pv('person_2a', '/', '2012-01-14 03:21:34'), pv('person_2b', '/pricing', '2012-01-14 03:28:34'), pv('person_2a', '/about', '2012-01-14 03:29:34'),
    pv('person_3', '/pricing', '2012-01-14 03:21:34'), pv('person_3', '/', '2012-01-14 03:28:34'),
    pv('person_4', '/', '2012-01-14 03:21:34'), pv('person_4', '/pricing', '2012-01-14 03:28:34'),
  ])
  const body = await queryOk(app, { kind: 'PathsQuery', dateRange: { date_from: '2012-01-08', date_to: '2012-01-15' }, pathsFilter: {} })
  assert.deepEqual(body.results.map((e: any) => [e.source, e.target, e.value, e.average_conversion_time]), [
    ['1_/', '2_/pricing', 2, 7 * MIN],
    ['1_/', '2_/about', 1, 7 * MIN],
    ['1_/pricing', '2_/', 1, 7 * MIN],
    ['2_/pricing', '3_/about', 1, MIN],
  ])
  const none = await queryOk(app, { kind: 'PathsQuery', dateRange: { date_from: '2012-01-20' }, pathsFilter: {} })
  assert.deepEqual(none.results, [])
  for (const [pathsFilter, attr] of [
    [{ localPathCleaningFilters: [{ regex: '(unclosed', alias: 'x' }] }, 'query.pathsFilter.localPathCleaningFilters.0.regex'],
    [{ includeEventTypes: ['$pageviews'] }, 'query.pathsFilter.includeEventTypes.0'],
    [{ stepLimit: 'five' }, 'query.pathsFilter.stepLimit'],
  ] as const) {
    const res = await postQuery(app, { kind: 'PathsQuery', pathsFilter })
    assert.equal(res.statusCode, 400, res.body)
    assert.equal(res.json().attr, attr)
  }
})
