// Named cases for PostHog's person rules (plugin-server persons/person-merge-service.ts, person-update.ts,
// person-state.ts; reference/posthog-server.md section 5). Each runs through the real planner.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { distinctIdsToLookUp, planPersonUpdates } from './plan-person-updates.ts'
import { isDistinctIdIllegal } from './illegal-distinct-id.ts'
import type { PersonState } from './person-types.ts'
import {
  alias, anEvent, identify, idSource, mergeDangerously, personWith, runBatch, setEvent,
} from './person-test-builders.ts'

function freshStore(): Map<string, PersonState> {
  return new Map()
}
const ids = (store: Map<string, PersonState>, d: string): string[] => [...(personWith(store, d)?.distinctIds ?? [])].sort()

test('an unseen distinct id creates one unidentified person with the event $set and $set_once', () => {
  const store = freshStore()
  const e = setEvent('u1', { $set: { a: 1 }, $set_once: { b: 2, a: 0 } })
  const plan = runBatch(store, [e], idSource())
  const p = personWith(store, 'u1')!
  assert.deepEqual(p.properties, { b: 2, a: 1, $creator_event_uuid: e.uuid })
  assert.equal(p.isIdentified, false)
  assert.deepEqual(plan.distinctIdMoves, [{ distinctId: 'u1', personId: p.id }])
  assert.equal(plan.events[0]!.kind === 'person' && plan.events[0]!.personId, p.id)
})

test('$set_once never overwrites, a stored null included; $set overwrites; $unset removes', () => {
  const store = freshStore()
  const newId = idSource()
  runBatch(store, [setEvent('u1', { $set: { a: 1, n: null } })], newId)
  runBatch(store, [setEvent('u1', { $set_once: { a: 2, n: 3, c: 4 }, $set: { d: 5 }, $unset: ['a'] })], newId)
  const props = { ...personWith(store, 'u1')!.properties }
  delete props.$creator_event_uuid
  assert.deepEqual(props, { n: null, c: 4, d: 5 })
})

test('$unset as an object uses its keys; a non-object $set is ignored', () => {
  const store = freshStore()
  const newId = idSource()
  runBatch(store, [setEvent('u1', { $set: { a: 1, b: 2 } })], newId)
  runBatch(store, [setEvent('u1', { $unset: { a: true }, $set: 'abc' })], newId)
  assert.deepEqual(Object.keys(personWith(store, 'u1')!.properties).sort(), ['$creator_event_uuid', 'b'])
})

test('a __proto__ key in $set is stored as a property, not as the prototype', () => {
  const store = freshStore()
  runBatch(store, [setEvent('u1', { $set: JSON.parse('{"__proto__": {"x": 1}}') })], idSource())
  const p = personWith(store, 'u1')!
  assert.ok(Object.hasOwn(p.properties, '__proto__'))
  assert.equal((p.properties as { x?: unknown }).x, undefined)
})

test('events of one batch apply in timestamp order, whatever their order in the batch', () => {
  const early = anEvent('$set', 'u1', { $set: { plan: 'free' } }, new Date('2024-02-01T00:00:00Z'))
  const late = anEvent('$set', 'u1', { $set: { plan: 'paid' } }, new Date('2024-02-02T00:00:00Z'))
  const store = freshStore()
  const plan = runBatch(store, [late, early], idSource())
  assert.equal(personWith(store, 'u1')!.properties.plan, 'paid')
  assert.deepEqual(plan.events.map((e) => e.uuid), [late.uuid, early.uuid], 'results stay in input order')
  assert.equal(plan.upserts.length, 1, 'one row per person per batch')
})

test('$exception and $$heatmap events attach the person but change no property', () => {
  const store = freshStore()
  const newId = idSource()
  runBatch(store, [setEvent('u1', { $set: { a: 1 } })], newId)
  runBatch(store, [anEvent('$exception', 'u1', { $set: { a: 2 } }), anEvent('$$heatmap', 'u1', { $set: { a: 3 } })], newId)
  assert.equal(personWith(store, 'u1')!.properties.a, 1)
})

test('$identify merges the anonymous person into the identified one; the event distinct id wins conflicts', () => {
  const store = freshStore()
  const newId = idSource()
  runBatch(store, [setEvent('anon', { $set: { a: 'anon', only_anon: 1 } }), setEvent('user', { $set: { a: 'user' } })], newId)
  const anonId = personWith(store, 'anon')!.id
  const userId = personWith(store, 'user')!.id
  const plan = runBatch(store, [identify('user', 'anon', { $set: { b: 1 } })], newId)
  const p = personWith(store, 'user')!
  assert.equal(p.id, userId)
  assert.deepEqual(ids(store, 'anon'), ['anon', 'user'])
  assert.equal(p.isIdentified, true)
  assert.equal(p.properties.a, 'user')
  assert.equal(p.properties.only_anon, 1)
  assert.equal(p.properties.b, 1)
  assert.deepEqual(plan.deletes, [anonId])
  assert.deepEqual(plan.overrides, [{ oldPersonId: anonId, overridePersonId: userId }])
  assert.equal(store.size, 1)
})

test('a merge keeps the older created_at and a version above both', () => {
  const store = freshStore()
  const newId = idSource()
  runBatch(store, [setEvent('anon', { $set: { a: 1 } })], newId)
  runBatch(store, [setEvent('anon', { $set: { a: 2 } }), setEvent('anon', { $set: { a: 3 } })], newId)
  runBatch(store, [setEvent('user', {})], newId)
  const anon = structuredClone(personWith(store, 'anon')!)
  runBatch(store, [identify('user', 'anon')], newId)
  const p = personWith(store, 'user')!
  assert.deepEqual(p.createdAt, anon.createdAt)
  assert.ok(p.version > anon.version)
})

test('$identify when neither id has a person creates one identified person with both ids', () => {
  const store = freshStore()
  runBatch(store, [identify('user', 'anon', { $set: { email: 'a@x' } })], idSource())
  assert.deepEqual(ids(store, 'user'), ['anon', 'user'])
  assert.equal(personWith(store, 'user')!.isIdentified, true)
  assert.equal(personWith(store, 'user')!.properties.email, 'a@x')
})

test('$identify when only one id has a person adds the other id to it and identifies it', () => {
  for (const existing of ['anon', 'user']) {
    const store = freshStore()
    const newId = idSource()
    runBatch(store, [setEvent(existing, { $set: { a: 1 } })], newId)
    const before = personWith(store, existing)!.id
    runBatch(store, [identify('user', 'anon')], newId)
    assert.equal(personWith(store, 'user')!.id, before, existing)
    assert.deepEqual(ids(store, 'user'), ['anon', 'user'])
    assert.equal(personWith(store, 'user')!.isIdentified, true)
  }
})

test('$identify without $anon_distinct_id is a plain update and identifies nobody', () => {
  const store = freshStore()
  runBatch(store, [anEvent('$identify', 'user', { $set: { a: 1 } })], idSource())
  assert.equal(personWith(store, 'user')!.isIdentified, false)
  assert.equal(personWith(store, 'user')!.properties.a, 1)
})

test('merging a distinct id into itself is a no-op that identifies nobody', () => {
  for (const e of [identify('u1', 'u1'), alias('u1', 'u1'), mergeDangerously('u1', 'u1')]) {
    const store = freshStore()
    const plan = runBatch(store, [e], idSource())
    assert.equal(personWith(store, 'u1')!.isIdentified, false, e.event)
    assert.deepEqual(plan.warnings, [])
  }
})

test('two identified persons are never merged by $identify or $create_alias (cannot_merge_already_identified)', () => {
  for (const make of [identify, alias]) {
    const store = freshStore()
    const newId = idSource()
    runBatch(store, [identify('alice', 'a-anon'), identify('bob', 'b-anon')], newId)
    const plan = runBatch(store, [make('alice', 'bob', { $set: { x: 1 } })], newId)
    assert.deepEqual(ids(store, 'alice'), ['a-anon', 'alice'])
    assert.deepEqual(ids(store, 'bob'), ['b-anon', 'bob'])
    assert.equal(plan.warnings[0]!.type, 'cannot_merge_already_identified')
    assert.equal(personWith(store, 'alice')!.properties.x, 1, 'the event still updates its own person')
    assert.equal(personWith(store, 'bob')!.properties.x, undefined)
  }
})

test('an identified "other" is refused even when the event person is anonymous, which then counts as identified', () => {
  const store = freshStore()
  const newId = idSource()
  runBatch(store, [identify('alice', 'a-anon'), setEvent('stranger', {})], newId)
  const plan = runBatch(store, [identify('stranger', 'alice')], newId)
  assert.equal(plan.warnings[0]!.type, 'cannot_merge_already_identified')
  assert.deepEqual(ids(store, 'stranger'), ['stranger'])
  assert.equal(personWith(store, 'stranger')!.isIdentified, true)
})

test('$merge_dangerously merges two identified persons', () => {
  const store = freshStore()
  const newId = idSource()
  runBatch(store, [identify('alice', 'a-anon'), identify('bob', 'b-anon')], newId)
  runBatch(store, [mergeDangerously('alice', 'bob')], newId)
  assert.deepEqual(ids(store, 'bob'), ['a-anon', 'alice', 'b-anon', 'bob'])
  assert.equal(store.size, 1)
})

test('$create_alias merges in both argument orders the SDKs use while the other person is anonymous', () => {
  // posthog-node: distinct_id = new id, alias = old; posthog-python alias(previous_id, distinct_id): the reverse.
  for (const e of [alias('user-1', 'anon-123'), alias('anon-123', 'user-1')]) {
    const store = freshStore()
    const newId = idSource()
    runBatch(store, [setEvent('anon-123', {}), setEvent('user-1', {})], newId)
    runBatch(store, [e], newId)
    assert.deepEqual(ids(store, 'user-1'), ['anon-123', 'user-1'])
  }
})

test('illegal distinct ids are never merged on (cannot_merge_with_illegal_distinct_id)', () => {
  for (const bad of ['anonymous', 'GUEST', 'null', '"undefined"', "'NaN'", '0', '  ', '[object Object]', 'None', 'Email']) {
    for (const e of [identify('user', bad), identify(bad, 'user'), mergeDangerously('user', bad)]) {
      const store = freshStore()
      const plan = runBatch(store, [e], idSource())
      assert.equal(plan.warnings[0]?.type, 'cannot_merge_with_illegal_distinct_id', `${e.event} ${bad}`)
      assert.equal(personWith(store, e.distinctId)!.distinctIds.length, 1)
      assert.equal(personWith(store, e.distinctId)!.isIdentified, false)
    }
  }
  assert.equal(isDistinctIdIllegal('nan'), false, 'NaN is illegal only in that case')
  assert.equal(isDistinctIdIllegal(' guest'), false, 'as upstream, only the blank test trims')
  assert.equal(isDistinctIdIllegal('user-1'), false)
})

test('an object $anon_distinct_id stringifies to [object Object] and is refused', () => {
  const plan = runBatch(freshStore(), [identify('user', { a: 1 })], idSource())
  assert.equal(plan.warnings[0]?.type, 'cannot_merge_with_illegal_distinct_id')
})

test('personless events create no person and change none; an existing person lends only its id', () => {
  const store = freshStore()
  const newId = idSource()
  const plan1 = runBatch(store, [setEvent('anon', { $process_person_profile: false, $set: { a: 1 } })], newId)
  assert.equal(store.size, 0)
  assert.deepEqual(plan1.personlessDistinctIds, ['anon'])
  const r1 = plan1.events[0]!
  assert.ok(r1.kind === 'person' && r1.personId === 'personless-anon' && r1.personMode === 'propertyless')
  runBatch(store, [setEvent('user', { $set: { a: 1 } })], newId)
  const plan2 = runBatch(store, [setEvent('user', { $process_person_profile: false, $set: { a: 2 } })], newId)
  const r2 = plan2.events[0]!
  assert.ok(r2.kind === 'person' && r2.personId === personWith(store, 'user')!.id)
  assert.deepEqual(r2.kind === 'person' && r2.personProperties, {})
  assert.equal(personWith(store, 'user')!.properties.a, 1)
  assert.deepEqual(plan2.upserts, [])
})

test('the first identified event of a personless distinct id creates its person and overrides the fake id', () => {
  const store = freshStore()
  const plan = runBatch(store, [setEvent('anon', { $process_person_profile: false }), identify('user', 'anon')], idSource())
  const p = personWith(store, 'anon')!
  assert.deepEqual(plan.overrides, [{ oldPersonId: 'personless-anon', overridePersonId: p.id }])
})

test('a personless event of a person older than a minute is force_upgrade', () => {
  const store = freshStore()
  const newId = idSource()
  runBatch(store, [anEvent('$set', 'u', {}, new Date('2024-03-01T00:00:00Z'))], newId)
  const plan = runBatch(store, [anEvent('x', 'u', { $process_person_profile: false }, new Date('2024-03-01T00:02:00Z'))], newId)
  assert.equal(plan.events[0]!.kind === 'person' && plan.events[0]!.personMode, 'force_upgrade')
})

test('identify-like events with $process_person_profile false are dropped with a warning', () => {
  for (const e of [identify('u', 'a'), alias('u', 'a'), mergeDangerously('u', 'a'), anEvent('$groupidentify', 'u')]) {
    e.properties.$process_person_profile = false
    const store = freshStore()
    const plan = runBatch(store, [e], idSource())
    assert.equal(plan.events[0]!.kind, 'drop', e.event)
    assert.equal(plan.warnings[0]!.type, 'invalid_event_when_process_person_profile_is_false')
    assert.equal(store.size, 0)
  }
})

test('a non-boolean $process_person_profile warns and processes the person', () => {
  const store = freshStore()
  const plan = runBatch(store, [setEvent('u', { $process_person_profile: 'false', $set: { a: 1 } })], idSource())
  assert.equal(plan.warnings[0]!.type, 'invalid_process_person_profile')
  assert.equal(personWith(store, 'u')!.properties.a, 1)
})

test('chained merges in one batch resolve overrides to the final person', () => {
  const store = freshStore()
  const newId = idSource()
  runBatch(store, [setEvent('a', {}), setEvent('b', {}), setEvent('c', {})], newId)
  const [a, b, c] = ['a', 'b', 'c'].map((d) => personWith(store, d)!.id)
  const plan = runBatch(store, [mergeDangerously('b', 'a'), mergeDangerously('c', 'b')], newId)
  assert.deepEqual(new Map(plan.overrides.map((o) => [o.oldPersonId, o.overridePersonId])), new Map([[a, c], [b, c]]))
  assert.deepEqual([...plan.deletes].sort(), [a, b].sort())
})

test('distinctIdsToLookUp lists every id of the batch once: event ids, $anon_distinct_id and alias', () => {
  const events = [identify('u', 'a'), alias('u', 'b'), setEvent('c', {}), setEvent('u', {})]
  assert.deepEqual(distinctIdsToLookUp(events).sort(), ['a', 'b', 'c', 'u'])
})

test('knownPersons given once per distinct id of the same person yields one row', () => {
  const person: PersonState = { id: 'p', distinctIds: ['a', 'b'], properties: {}, isIdentified: true, createdAt: new Date(0), version: 3 }
  const plan = planPersonUpdates({
    events: [setEvent('a', { $set: { x: 1 } }), setEvent('b', { $set: { y: 1 } })],
    knownPersons: new Map([['a', person], ['b', person]]), newId: idSource(), personlessId: (d) => d,
  })
  assert.equal(plan.upserts.length, 1)
  assert.deepEqual(plan.upserts[0]!.properties, { x: 1, y: 1 })
  assert.equal(plan.upserts[0]!.version, 5)
  assert.deepEqual(person.properties, {}, 'the input is not mutated')
})
