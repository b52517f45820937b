import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp } from '../helpers/test-app.ts'
import { eventually } from '../helpers/eventually.ts'

test('events carrying $groups create their group types, in order of first appearance', async (t) => {
  const app = await buildTestApp(t)
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
