// Plan outputs the pipeline step relies on: overrides for personless ids, shared snapshots, and the
// event type the planners read.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { NormalisedEvent } from '../events/index.ts'
import type { GroupEvent } from '../groups/index.ts'
import type { PersonEvent, PersonState } from './person-types.ts'
import { anEvent, identify, idSource, personWith, runBatch, setEvent } from './person-test-builders.ts'

const freshStore = (): Map<string, PersonState> => new Map()

test('a distinct id used personless in an earlier batch gets an override when it gets a person', () => {
  const store = freshStore()
  const personless = new Set<string>()
  const newId = idSource()
  runBatch(store, [setEvent('anon', { $process_person_profile: false })], newId, personless)
  assert.deepEqual([...personless], ['anon'])
  const plan = runBatch(store, [identify('user', 'anon')], newId, personless)
  assert.deepEqual(plan.overrides, [{ oldPersonId: 'personless-anon', overridePersonId: personWith(store, 'anon')!.id }])
})

test('events of an unchanged person share one frozen snapshot; a change gives a new one', () => {
  const plan = runBatch(freshStore(), [setEvent('u', { $set: { a: 1 } }), anEvent('x', 'u'), setEvent('u', { $set: { a: 2 } })], idSource())
  const [s1, s2, s3] = plan.events.map((e) => (e.kind === 'person' ? e.personProperties : null))
  assert.equal(s1, s2)
  assert.ok(Object.isFrozen(s1))
  assert.equal(s1!.a, 1)
  assert.equal(s3!.a, 2)
})

test('a normalised event is a PersonEvent and a GroupEvent (compile-time)', () => {
  const e = {} as NormalisedEvent
  const asPerson: PersonEvent = e
  const asGroup: GroupEvent = e
  assert.ok(asPerson === asGroup)
})
