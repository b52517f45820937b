// PostHog's group rules (plugin-server groups.ts, group-type-manager.ts, process-groups-step.ts;
// reference/posthog-server.md 5.4), through the pure planner.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { groupId, groupsToLookUp, planGroupUpdates, type GroupEvent, type GroupState } from './plan-group-updates.ts'

let t = Date.parse('2024-01-01T00:00:00Z')
function anEvent(event: string, properties: Record<string, unknown>, at?: Date): GroupEvent {
  t += 1000
  return { uuid: `e-${t}`, event, timestamp: at ?? new Date(t), properties }
}
const groupIdentify = (groupType: unknown, key: unknown, set?: unknown): GroupEvent =>
  anEvent('$groupidentify', { $group_type: groupType, $group_key: key, ...(set === undefined ? {} : { $group_set: set }) })
const plan = (events: GroupEvent[], types: [string, number][] = [], known: GroupState[] = []) =>
  planGroupUpdates({ events, groupTypes: new Map(types), knownGroups: new Map(known.map((g) => [groupId(g.typeIndex, g.key), g])) })

test('$groups fills $group_<index> from the project mapping', () => {
  const p = plan([anEvent('$pageview', { $groups: { company: 'acme', project: 42 } })], [['company', 0], ['project', 3]])
  assert.deepEqual(p.eventGroups, [{ $group_0: 'acme', $group_3: '42' }])
  assert.deepEqual(p.newGroupTypes, [])
})

test('a new group type takes the next free index, in the order first seen', () => {
  const p = plan([anEvent('x', { $groups: { team: 't1' } }), anEvent('y', { $groups: { org: 'o1', team: 't2' } })], [['company', 0]])
  assert.deepEqual(p.newGroupTypes, [{ groupType: 'team', index: 1 }, { groupType: 'org', index: 2 }])
  assert.deepEqual(p.eventGroups, [{ $group_1: 't1' }, { $group_2: 'o1', $group_1: 't2' }])
})

test('a sixth group type is ignored with a warning; the other types of the event still apply', () => {
  const five: [string, number][] = ['a', 'b', 'c', 'd', 'e'].map((k, i) => [k, i])
  const p = plan([anEvent('x', { $groups: { sixth: 's', c: 'k' } })], five)
  assert.deepEqual(p.eventGroups, [{ $group_2: 'k' }])
  assert.deepEqual(p.newGroupTypes, [])
  assert.equal(p.warnings[0]!.type, 'group_type_limit_reached')
})

test('a $groups that is not an object, and null or object keys, are ignored', () => {
  const p = plan([anEvent('x', { $groups: 'acme' }), anEvent('y', { $groups: ['a'] }), anEvent('z', { $groups: { a: null, b: { k: 1 } } })])
  assert.deepEqual(p.eventGroups, [{}, {}, {}])
  assert.deepEqual(p.newGroupTypes, [])
})

test('$groupidentify creates the group with $group_set and a stringified key', () => {
  const e = groupIdentify('company', 7, { plan: 'enterprise' })
  const p = plan([e])
  assert.deepEqual(p.newGroupTypes, [{ groupType: 'company', index: 0 }])
  assert.deepEqual(p.upserts, [{ typeIndex: 0, key: '7', properties: { plan: 'enterprise' }, createdAt: e.timestamp, version: 1 }])
})

test('$groupidentify overwrites existing keys, keeps the others and bumps the version once per change', () => {
  const stored: GroupState = { typeIndex: 0, key: 'acme', properties: { plan: 'free', seats: 3 }, createdAt: new Date(0), version: 4 }
  const p = plan([groupIdentify('company', 'acme', { plan: 'paid' }), groupIdentify('company', 'acme', { plan: 'paid' })], [['company', 0]], [stored])
  assert.deepEqual(p.upserts, [{ ...stored, properties: { plan: 'paid', seats: 3 }, version: 5 }])
  assert.deepEqual(stored.properties, { plan: 'free', seats: 3 }, 'the input is not mutated')
})

test('$groupidentify events apply in timestamp order', () => {
  const late = anEvent('$groupidentify', { $group_type: 'c', $group_key: 'k', $group_set: { v: 'late' } }, new Date('2024-06-02'))
  const early = anEvent('$groupidentify', { $group_type: 'c', $group_key: 'k', $group_set: { v: 'early' } }, new Date('2024-06-01'))
  const p = plan([late, early])
  assert.equal(p.upserts[0]!.properties.v, 'late')
  assert.deepEqual(p.upserts[0]!.createdAt, early.timestamp)
})

test('$groupidentify with a falsy $group_type or $group_key changes nothing', () => {
  const p = plan([groupIdentify('', 'k', { a: 1 }), groupIdentify('c', '', { a: 1 }), groupIdentify('c', 0, { a: 1 }), groupIdentify(undefined, 'k')])
  assert.deepEqual(p.upserts, [])
  assert.deepEqual(p.newGroupTypes, [])
})

test('a $group_set that is not an object is a warning and no upsert', () => {
  const p = plan([groupIdentify('c', 'k', 'plan=paid')])
  assert.deepEqual(p.upserts, [])
  assert.equal(p.warnings[0]!.type, 'invalid_group_set')
})

test('a missing $group_set creates the group without properties', () => {
  assert.deepEqual(plan([groupIdentify('c', 'k')]).upserts[0]!.properties, {})
})

test('groupsToLookUp lists each identified (type, key) once', () => {
  const events = [groupIdentify('c', 'k'), groupIdentify('c', 'k'), groupIdentify('c', 1), anEvent('x', { $groups: { c: 'z' } })]
  assert.deepEqual(groupsToLookUp(events), [{ groupType: 'c', key: 'k' }, { groupType: 'c', key: '1' }])
})
