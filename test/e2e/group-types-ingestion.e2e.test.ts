import assert from 'node:assert/strict'
import { testOnEachEngine } from '../helpers/engines.ts'
import { buildTestApp } from '../helpers/test-app.ts'
import { eventually } from '../helpers/eventually.ts'

testOnEachEngine('events carrying $groups create their group types, in order of first appearance', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const batch = [
    { event: 'signed up', distinct_id: 'u1', properties: { $groups: { company: 'acme' } } },
    { event: 'invited', distinct_id: 'u1', properties: { $groups: { company: 'acme', team: 'core' } } },
    { event: 'plain', distinct_id: 'u2', properties: {} },
  ]
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200)
  const types = await eventually(async () => {
    const r = await app.http.inject({ url: `/api/projects/${app.projectId}/groups_types/`, headers: app.auth })
    const body = r.json() as Array<{ group_type: string; group_type_index: number }>
    return body.length === 2 && body
  })
  assert.deepEqual(
    types.map((g) => [g.group_type_index, g.group_type]),
    [
      [0, 'company'],
      [1, 'team'],
    ],
  )
})

testOnEachEngine('an event with $groups carries $group_<index>: key in its properties, in the events API and in HogQL', async (t, engine) => {
  const app = await buildTestApp(t, { engine })
  const batch = [
    { event: 'signed up', distinct_id: 'u1', timestamp: '2024-06-01T10:00:00Z', properties: { $groups: { company: 'acme' } } },
    { event: 'invited', distinct_id: 'u1', timestamp: '2024-06-01T11:00:00Z', properties: { $groups: { company: 'acme', team: 'core' } } },
    { event: 'plain', distinct_id: 'u2', timestamp: '2024-06-01T12:00:00Z', properties: { n: 1 } },
  ]
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200)
  const events = await eventually(async () => {
    const r = await app.http.inject({ url: `/api/projects/${app.projectId}/events/?orderBy=["timestamp"]`, headers: app.auth })
    const body = r.json() as { results: Array<{ event: string; properties: Record<string, unknown> }> }
    return body.results.length === 3 && body.results
  })
  const byName = new Map(events.map((e) => [e.event, e.properties]))
  assert.equal(byName.get('signed up')!.$group_0, 'acme')
  assert.equal('$group_1' in byName.get('signed up')!, false)
  assert.deepEqual([byName.get('invited')!.$group_0, byName.get('invited')!.$group_1], ['acme', 'core'])
  assert.equal(Object.keys(byName.get('plain')!).some((k) => k.startsWith('$group_')), false, 'an event without groups gets none')

  const hogql = await app.http.inject({
    method: 'POST', url: `/api/projects/${app.projectId}/query/`, headers: app.auth,
    payload: { query: { kind: 'HogQLQuery', query: 'SELECT event, properties.$group_0, properties.$group_1 FROM events ORDER BY timestamp' } },
  })
  assert.equal(hogql.statusCode, 200, hogql.body)
  assert.deepEqual(hogql.json().results, [['signed up', 'acme', null], ['invited', 'acme', 'core'], ['plain', null, null]])
})
