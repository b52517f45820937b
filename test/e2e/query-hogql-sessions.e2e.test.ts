import assert from 'node:assert/strict'
import { strangerWithProject } from '../helpers/private-api.ts'
import { captureEvents, queryOk, type TestEvent } from '../helpers/query-data.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { testOnEachEngine } from '../helpers/engines.ts'

// HogQL's `sessions` table and `events.session.*` on both engines. Four sessions whose fields are
// worked out by hand below (PostHog's sessions_v2 definitions), one event without a session id.
const pv = (session: string, distinct_id: string, timestamp: string, url: string, extra: Record<string, unknown> = {}): TestEvent => ({
  event: '$pageview', distinct_id, timestamp, properties: { $session_id: session, $current_url: url, ...extra },
})
const paid = { utm_source: 'google', utm_medium: 'cpc', $referring_domain: 'www.google.com' }
// s-1: paid search, two page views and a click, 60 s; its first event arrives last (a later micro-batch).
const s1Late = pv('s-1', 'user-a', '2024-06-01T10:00:00.250Z', 'https://shop.example.com/a?x=1', paid)
const s1 = [
  pv('s-1', 'user-a', '2024-06-01T10:00:30Z', 'https://shop.example.com/b', paid),
  { event: '$autocapture', distinct_id: 'user-a', timestamp: '2024-06-01T10:01:00.900Z', properties: { $session_id: 's-1', $current_url: 'https://shop.example.com/b' } },
]
// s-2: one page view then a page leave 5 s later: a bounce, direct.
const s2 = [
  pv('s-2', 'user-b', '2024-06-01T11:00:00Z', 'https://shop.example.com/c', { $referring_domain: '$direct' }),
  { event: '$pageleave', distinct_id: 'user-b', timestamp: '2024-06-01T11:00:05Z', properties: { $session_id: 's-2', $current_url: 'https://shop.example.com/c' } },
]
// s-3: across midnight, anonymous then identified (the last distinct id is the session's), a referral.
const s3 = [
  pv('s-3', 'anon-c', '2024-06-01T23:59:50Z', 'https://shop.example.com/d#top', { $referring_domain: 'blog.example.org' }),
  pv('s-3', 'user-c', '2024-06-02T00:00:20Z', 'https://shop.example.com/e', { $referring_domain: 'blog.example.org' }),
]
// s-4: no page view: not a bounce nor a non-bounce (NULL).
const s4 = [{ event: 'signup', distinct_id: 'user-d', timestamp: '2024-06-02T09:00:00Z', properties: { $session_id: 's-4' } }]
const noSession: TestEvent = { event: '$pageview', distinct_id: 'user-e', timestamp: '2024-06-02T12:00:00Z', properties: { $current_url: 'https://shop.example.com/z' } }
const first = [...s1, ...s2, ...s3, ...s4, noSession]

const hogql = (app: TestApp, query: string) => queryOk(app, { kind: 'HogQLQuery', query })
const ms = (v: unknown) => (v === null ? null : Date.parse(String(v).replace(' ', 'T').replace(/(T[\d:.]+)$/, '$1Z')))

testOnEachEngine('HogQL sessions: the sessions table and events.session.*', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, first)
  await captureEvents(app, [s1Late], first.length)

  const rows = await hogql(app, `SELECT session_id, distinct_id, $start_timestamp, $end_timestamp, $session_duration, $entry_current_url, $entry_pathname,
    $exit_current_url, $end_pathname, $pageview_count, $autocapture_count, $is_bounce, $entry_utm_source, $entry_referring_domain, $channel_type
    FROM sessions ORDER BY session_id`)
  assert.deepEqual(rows.columns, ['session_id', 'distinct_id', '$start_timestamp', '$end_timestamp', '$session_duration', '$entry_current_url', '$entry_pathname',
    '$exit_current_url', '$end_pathname', '$pageview_count', '$autocapture_count', '$is_bounce', '$entry_utm_source', '$entry_referring_domain', '$channel_type'])
  // ClickHouse's times are whole seconds (18.16 has no DateTime64): its start of s-1 is 10:00:00.
  const at = (iso: string) => (engine === 'clickhouse' ? Math.floor(Date.parse(iso) / 1000) * 1000 : Date.parse(iso))
  const expected = [
    ['s-1', 'user-a', at('2024-06-01T10:00:00.250Z'), at('2024-06-01T10:01:00.900Z'), 60, 'https://shop.example.com/a?x=1', '/a', 'https://shop.example.com/b', '/b', 2, 1, false, 'google', 'www.google.com', 'Paid Search'],
    ['s-2', 'user-b', at('2024-06-01T11:00:00Z'), at('2024-06-01T11:00:05Z'), 5, 'https://shop.example.com/c', '/c', 'https://shop.example.com/c', '/c', 1, 0, true, null, '$direct', 'Direct'],
    ['s-3', 'user-c', at('2024-06-01T23:59:50Z'), at('2024-06-02T00:00:20Z'), 30, 'https://shop.example.com/d#top', '/d', 'https://shop.example.com/e', '/e', 2, 0, false, null, 'blog.example.org', 'Referral'],
    ['s-4', 'user-d', at('2024-06-02T09:00:00Z'), at('2024-06-02T09:00:00Z'), 0, null, null, null, null, 0, 0, null, null, null, 'Unknown'],
  ]
  assert.deepEqual(rows.results.map((r: unknown[]) => [...r.slice(0, 2), ms(r[2]), ms(r[3]), ...r.slice(4)]), expected)
  assert.deepEqual(rows.types.map((x: [string, string]) => x[1]).slice(2, 5).map((n: string) => n.replace(/\(.*/, '')), ['DateTime64', 'DateTime64', 'Int64'])

  // In WHERE, GROUP BY and aggregates; the alias `duration`; SELECT *.
  assert.deepEqual((await hogql(app, 'SELECT count() FROM sessions WHERE $is_bounce')).results, [[1]])
  assert.deepEqual((await hogql(app, 'SELECT session_id FROM sessions WHERE duration >= 30 ORDER BY session_id')).results, [['s-1'], ['s-3']])
  assert.deepEqual((await hogql(app, `SELECT $channel_type, sum($pageview_count) FROM sessions GROUP BY $channel_type ORDER BY 1`)).results,
    [['Direct', 1], ['Paid Search', 2], ['Referral', 2], ['Unknown', 0]])
  assert.deepEqual((await hogql(app, `SELECT s.session_id FROM sessions s WHERE s.$start_timestamp >= '2024-06-01 23:00:00' ORDER BY 1`)).results, [['s-3'], ['s-4']])
  const star = await hogql(app, 'SELECT * FROM sessions ORDER BY session_id LIMIT 1')
  for (const field of ['session_id', 'distinct_id', '$start_timestamp', '$session_duration', '$entry_pathname', '$channel_type', '$is_bounce']) assert.ok(star.columns.includes(field), field)

  // events.session.*: each event with its session's fields (NULL for the event without a session id).
  const byEvent = await hogql(app, `SELECT event, events.session.$session_duration, session.$entry_pathname, session.$is_bounce FROM events ORDER BY timestamp, event`)
  const sessionOf: Record<string, [number, string | null, boolean | null]> = { 's-1': [60, '/a', false], 's-2': [5, '/c', true], 's-3': [30, '/d', false], 's-4': [0, null, null] }
  const all = [...first, s1Late].sort((a, b) => Date.parse(a.timestamp!) - Date.parse(b.timestamp!) || a.event.localeCompare(b.event))
  assert.deepEqual(byEvent.results, all.map((e) => [e.event, ...(sessionOf[e.properties?.$session_id as string] ?? [null, null, null])]))
  const grouped = await hogql(app, `SELECT session.$channel_type AS channel, count() FROM events WHERE event = '$pageview' AND session.$session_duration > 10 GROUP BY channel ORDER BY channel`)
  assert.deepEqual(grouped.results, [['Paid Search', 2], ['Referral', 2]])
  const joined = await hogql(app, `SELECT s.$entry_pathname, count() FROM events e JOIN sessions s ON e.$session_id = s.session_id GROUP BY 1 ORDER BY 1`)
  // s-4 has no entry page; the event without a session id has no session.
  assert.deepEqual(joined.results, [['/a', 3], ['/c', 2], ['/d', 2], [null, 1]])
})

testOnEachEngine('HogQL sessions are the project\'s own', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await captureEvents(app, s2)
  const other = await strangerWithProject(app)
  const token = (await app.services.projects.listProjects()).find((p) => p.id === other.projectId)!.apiToken
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: token, batch: s1.map((e) => ({ ...e, properties: { ...e.properties, $session_id: 's-2' } })) } })
  assert.equal(res.statusCode, 200, res.body)
  const theirs = { ...app, auth: other.headers as { authorization: string }, projectId: other.projectId }
  for (let i = 0; i < 400 && (await hogql(theirs, 'select count() from events')).results[0][0] < s1.length; i++) await new Promise((r) => setTimeout(r, 25))
  // The same session id in both projects: each project sees its own events' session only.
  assert.deepEqual((await hogql(app, 'SELECT session_id, $pageview_count, $autocapture_count, $session_duration FROM sessions')).results, [['s-2', 1, 0, 5]])
  assert.deepEqual((await hogql(theirs, 'SELECT session_id, $pageview_count, $autocapture_count FROM sessions')).results, [['s-2', 1, 1]])
  assert.deepEqual((await hogql(app, `SELECT session.$autocapture_count, count() FROM events GROUP BY 1`)).results, [[0, 2]])
})
