import assert from 'node:assert/strict'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { testOnEachEngine } from '../helpers/engines.ts'
import { clickHouseStatement } from '../helpers/clickhouse.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'

const capture = async (app: TestApp, batch: object[]) => {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
}
const decide = async (app: TestApp, distinctId: string) => {
  const res = await app.http.inject({ method: 'POST', url: '/flags/?v=2', payload: { token: app.projectKey, distinct_id: distinctId } })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as { flags: Record<string, { enabled: boolean }> }
}
let clock = Date.parse('2024-06-01T00:00:00Z')
const ev = (event: string, distinctId: string, properties: Record<string, unknown> = {}) => ({
  event, distinct_id: distinctId, uuid: crypto.randomUUID(), timestamp: new Date((clock += 1000)).toISOString(), properties,
})

/** Runs the store's own SQL on the app's events: on ClickHouse in its database, on DuckDB in its file once the app is closed. */
async function queryEvents(app: TestApp, sql: { duckdb: string; clickhouse: string }): Promise<Record<string, unknown>[]> {
  const url = app.config.storage.clickhouseUrl
  if (url) {
    const database = new URL(url).pathname.slice(1)
    const text = await clickHouseStatement(`${sql.clickhouse.replaceAll('{db}', database)} FORMAT JSON`)
    return (JSON.parse(text) as { data: Record<string, unknown>[] }).data
  }
  await app.close()
  const db = await DuckDBInstance.create(path.join(app.dataDir, 'events', 'events.duckdb'))
  try {
    const c = await db.connect()
    const rows = (await c.runAndReadAll(sql.duckdb)).getRowObjects()
    c.closeSync()
    return rows as Record<string, unknown>[]
  } finally {
    db.closeSync()
  }
}

/** Each event's person after overrides: what an action or insight query counts. */
const RESOLVED = {
  duckdb: `SELECT e.distinct_id, e.event, e.person_id::VARCHAR AS stored_person,
    coalesce(o.override_person_id, e.person_id)::VARCHAR AS person, e.person_properties
  FROM events e LEFT JOIN person_overrides o ON o.project_id = e.project_id AND o.old_person_id = e.person_id
  ORDER BY e.timestamp`,
  // The latest version of each override row wins (ReplacingMergeTree, merged or not); no match gives ''.
  clickhouse: `SELECT distinct_id, event, stored_person, if(override = '' OR deleted = 1, stored_person, override) AS person, person_properties
  FROM (SELECT project_id, distinct_id, event, toString(person_id) AS stored_person, person_properties, timestamp_ms FROM {db}.events)
  ALL LEFT JOIN (SELECT project_id, toString(old_person_id) AS stored_person, toString(argMax(override_person_id, version)) AS override, argMax(is_deleted, version) AS deleted
    FROM {db}.person_overrides GROUP BY project_id, old_person_id) USING (project_id, stored_person)
  ORDER BY timestamp_ms`,
}

testOnEachEngine('persons: every event gets a person, $set reaches /decide, $identify merges the anonymous person, earlier events resolve through the overrides', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const flag = await app.http.inject({
    method: 'POST', url: `/api/projects/${app.projectId}/feature_flags/`, headers: app.auth,
    payload: { key: 'pro-only', filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }], rollout_percentage: 100 }] } },
  })
  assert.equal(flag.statusCode, 201, flag.body)
  // /decide caches the anonymous id as person-less before any event arrives.
  assert.equal((await decide(app, 'anon-1')).flags['pro-only']!.enabled, false)

  // user-1 has a person of its own (anonymous) before it identifies: $identify merges two persons.
  await capture(app, [ev('$pageview', 'anon-1'), ev('$pageview', 'anon-1', { $set: { plan: 'pro' } }), ev('$pageview', 'other'), ev('$pageview', 'user-1')])
  await waitForEvents(app, 4)
  assert.equal((await decide(app, 'anon-1')).flags['pro-only']!.enabled, true, 'the $set reached /decide: its cache was invalidated')

  await capture(app, [ev('$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set: { email: 'u@example.com' } }), ev('$pageview', 'user-1')])
  await waitForEvents(app, 6)
  assert.equal((await decide(app, 'user-1')).flags['pro-only']!.enabled, true, 'the identified id has the merged person')

  // A personless event creates no person.
  await capture(app, [ev('$pageview', 'ghost', { $process_person_profile: false, $set: { plan: 'pro' } })])
  await waitForEvents(app, 7)
  assert.equal((await decide(app, 'ghost')).flags['pro-only']!.enabled, false)
  const ghost = await app.services.personData.getPersons(app.projectId, ['ghost'])
  assert.equal(ghost.size, 0)

  const rows = await queryEvents(app, RESOLVED)
  assert.equal(rows.length, 7)
  for (const r of rows) assert.match(String(r.stored_person), /^[0-9a-f-]{36}$/)
  const byId = (id: string) => rows.filter((r) => r.distinct_id === id)
  const userPerson = byId('user-1')[0]!.person
  assert.equal(new Set(byId('user-1').map((r) => r.person)).size, 1)
  // anon-1's events were stored before the merge; only the override makes them the identified person's.
  for (const r of byId('anon-1')) assert.equal(r.person, userPerson)
  assert.ok(byId('anon-1').every((r) => r.stored_person !== r.person) || byId('user-1').some((r) => r.stored_person !== r.person), 'one side was stored under the merged-away person')
  assert.notEqual(byId('other')[0]!.person, userPerson)
  // Persons on events: a snapshot after the event's own updates.
  assert.equal(JSON.parse(String(byId('anon-1')[0]!.person_properties)).plan, undefined)
  assert.equal(JSON.parse(String(byId('anon-1')[1]!.person_properties)).plan, 'pro')
  const identified = JSON.parse(String(byId('user-1')[2]!.person_properties))
  assert.equal(identified.plan, 'pro')
  assert.equal(identified.email, 'u@example.com')
  const [ghostRow] = byId('ghost')
  assert.equal(ghostRow!.person_properties, '{}')
  assert.notEqual(ghostRow!.person, userPerson)
})

testOnEachEngine('persons: $identify does not merge two identified persons; $merge_dangerously does, and earlier events follow', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await capture(app, [
    ev('$identify', 'u1', { $anon_distinct_id: 'a1', $set: { x: 1 } }),
    ev('$identify', 'u2', { $anon_distinct_id: 'a2', $set: { y: 2 } }),
  ])
  await waitForEvents(app, 2)
  await capture(app, [ev('$identify', 'u1', { $anon_distinct_id: 'u2' })])
  await waitForEvents(app, 3)
  let persons = await app.services.personData.getPersons(app.projectId, ['u1', 'u2'])
  assert.notEqual(persons.get('u1')!.personId, persons.get('u2')!.personId)
  await capture(app, [ev('$merge_dangerously', 'u1', { alias: 'u2' })])
  await waitForEvents(app, 4)
  persons = await app.services.personData.getPersons(app.projectId, ['u1', 'u2', 'a2'])
  assert.equal(persons.get('u1')!.personId, persons.get('u2')!.personId)
  assert.equal(persons.get('a2')!.personId, persons.get('u1')!.personId)
  assert.equal(persons.get('u2')!.properties.x, 1)
  assert.equal(persons.get('u1')!.properties.y, 2)

  const rows = await queryEvents(app, RESOLVED)
  assert.equal(rows.length, 4)
  assert.equal(new Set(rows.map((r) => r.person)).size, 1, 'every event resolves to the one merged person')
  assert.equal(new Set(rows.map((r) => r.stored_person)).size, 2)
})

testOnEachEngine('groups: $groups fills $group_0..4 on the stored event, $groupidentify upserts the group that /decide reads', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  // /decide's cache learns the group is absent first: the step must invalidate it.
  assert.equal((await app.services.personData.getGroups(app.projectId, [{ groupTypeIndex: 0, groupKey: 'acme' }])).size, 0)
  await capture(app, [
    ev('signed up', 'u1', { $groups: { company: 'acme' } }),
    ev('$groupidentify', 'u1', { $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'enterprise' } }),
    ev('invited', 'u1', { $groups: { company: 'acme', team: 'core' } }),
    ev('plain', 'u2'),
  ])
  await waitForEvents(app, 4)
  const groups = await app.services.personData.getGroups(app.projectId, [{ groupTypeIndex: 0, groupKey: 'acme' }])
  assert.deepEqual(groups.get('0:acme'), { plan: 'enterprise' })
  const rows = await queryEvents(app, { duckdb: 'SELECT event, group_0, group_1, group_2 FROM events ORDER BY timestamp', clickhouse: 'SELECT event, group_0, group_1, group_2 FROM {db}.events ORDER BY timestamp_ms' })
  assert.deepEqual(rows.map((r) => [r.event, r.group_0, r.group_1, r.group_2]), [
    ['signed up', 'acme', null, null],
    ['$groupidentify', null, null, null],
    ['invited', 'acme', 'core', null],
    ['plain', null, null, null],
  ])
})

testOnEachEngine('persons: personless events of a distinct id that later gets a person resolve to it through the overrides', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  await capture(app, [ev('$pageview', 'late', { $process_person_profile: false }), ev('$pageview', 'late', { $process_person_profile: false })])
  await waitForEvents(app, 2)
  assert.equal((await app.services.personData.getPersons(app.projectId, ['late'])).size, 0)
  await capture(app, [ev('$pageview', 'late', { $set: { plan: 'pro' } })])
  await waitForEvents(app, 3)
  const rows = await queryEvents(app, RESOLVED)
  assert.equal(rows.length, 3)
  assert.equal(new Set(rows.map((r) => r.person)).size, 1, 'the personless events count for the person')
  assert.equal(new Set(rows.map((r) => r.stored_person)).size, 2)
  assert.deepEqual(rows.map((r) => r.person_properties), ['{}', '{}', rows[2]!.person_properties])
})
