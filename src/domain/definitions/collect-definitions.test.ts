import assert from 'node:assert/strict'
import { test } from 'node:test'
import { collectDefinitions, detectPropertyType } from './index.ts'

test('detectPropertyType follows PostHog ingestion', () => {
  const cases: Array<[string, unknown, string | null]> = [
    ['plan', 'pro', 'String'], ['seats', 3, 'Numeric'], ['ratio', -0.5, 'Numeric'], ['ok', false, 'Boolean'],
    ['flag', ' TRUE ', 'Boolean'], ['at', '2026-01-02', 'DateTime'], ['at', '2026-01-02T03:04:05.678+02:00', 'DateTime'],
    ['at', '2026-13-45', 'String'], ['at', '2026-01-02 03:04', 'DateTime'], ['$time', 1_767_225_600.5, 'DateTime'],
    ['created_timestamp', 1_767_225_600_000, 'DateTime'], ['time_spent', 42, 'Numeric'], ['count', 1_767_225_600, 'Numeric'],
    ['utm_campaign', 42, 'String'], ['UTM_x', true, 'String'], ['nested', { a: 1 }, null], ['list', [1], null], ['nothing', null, null],
  ]
  for (const [key, value, type] of cases) assert.equal(detectPropertyType(key, value), type, `${key}=${JSON.stringify(value)}`)
})

test('collectDefinitions: distinct per batch, first detected type kept, $set keys are person properties, instructions skipped', () => {
  const seen = collectDefinitions([
    { projectId: 1, event: 'a', properties: { x: null, $set: { email: 'e' }, $set_once: { first: 1 }, $groups: { company: 'c' } } },
    { projectId: 1, event: 'a', properties: { x: 2, y: 'y' } },
    { projectId: 1, event: 'b', properties: { x: 'late' } },
    { projectId: 2, event: 'a', properties: { x: true } },
    { projectId: 1, event: '$groupidentify', groupTypeIndex: 1, properties: { $group_type: 'company', $group_set: { size: 5 } } },
    { projectId: 1, event: 'x'.repeat(201), properties: { dropped: 1 } },
    { projectId: 1, event: 'c', properties: { ['k'.repeat(201)]: 1, '': 2 } },
  ])
  assert.deepEqual(seen.events.map((e) => [e.projectId, e.name]), [[1, 'a'], [1, 'b'], [2, 'a'], [1, '$groupidentify'], [1, 'c']])
  assert.deepEqual(seen.properties.map((p) => [p.projectId, p.type, p.groupTypeIndex, p.name, p.propertyType]), [
    [1, 1, -1, 'x', 'Numeric'], [1, 1, -1, 'y', 'String'], [1, 1, -1, '$group_type', 'String'],
    [1, 2, -1, 'email', 'String'], [1, 2, -1, 'first', 'Numeric'], [2, 1, -1, 'x', 'Boolean'], [1, 3, 1, 'size', 'Numeric'],
  ])
  assert.deepEqual(seen.eventProperties.map((p) => [p.projectId, p.event, p.property]), [
    [1, 'a', 'x'], [1, 'a', 'y'], [1, 'b', 'x'], [2, 'a', 'x'], [1, '$groupidentify', '$group_type'],
  ])
})
