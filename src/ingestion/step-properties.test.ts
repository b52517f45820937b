import assert from 'node:assert/strict'
import { test } from 'node:test'
import { propertiesOf } from './event-properties.ts'
import { decodeQueuedEvent, encodeQueuedEvent } from './queued-event.ts'
import { isStepKey, stepPropertiesOf, summariseProperties, withAddedProperties, withRewrittenProperties } from './step-properties.ts'

const UUID = '0190e0a0-0000-7000-8000-000000000001'
const queued = (properties: Record<string, unknown>) =>
  decodeQueuedEvent(
    encodeQueuedEvent(1, {
      uuid: UUID, event: 'e', distinctId: 'd', properties, timestamp: new Date(1000), createdAt: new Date(2000), elementsChain: 'a:b',
    } as Parameters<typeof encodeQueuedEvent>[1]),
  )

const PROPS = {
  $current_url: 'https://x/', n: 1, ok: true, nested: { $set: 1 }, $ip: '1.2.3.4', $set: { plan: 'pro' }, $set_once: { first: 1 },
  $unset: ['gone'], $process_person_profile: false, $anon_distinct_id: 'anon', alias: 'a', $groups: { company: 'c' },
  $group_type: 'company', $group_key: 'c', $group_set: { size: 3 }, $group_0: 'c', $geoip_disable: true, $geoip_city_name: 'X',
}

test('a queued event carries beside its properties text exactly the keys the steps read, with their values', () => {
  const e = queued(PROPS)
  assert.deepEqual(JSON.parse(e.properties), PROPS, 'the text is all the properties')
  const expected = Object.fromEntries(Object.entries(PROPS).filter(([k]) => isStepKey(k)))
  assert.deepEqual(e.stepProperties, expected)
  assert.deepEqual(Object.keys(expected).sort(), [
    '$anon_distinct_id', '$geoip_city_name', '$geoip_disable', '$group_0', '$group_key', '$group_set', '$group_type', '$groups', '$ip',
    '$process_person_profile', '$set', '$set_once', '$unset', 'alias',
  ])
  assert.equal(e.parsed, undefined, 'nothing parsed')
  assert.equal(stepPropertiesOf(e), e.stepProperties)
  assert.equal(e.parsed, undefined, 'reading the step properties parses nothing')
})

test('a message of the previous format (seven header fields) still decodes; its steps read the parsed properties', () => {
  const old = `[${JSON.stringify(UUID)},1,"e","d",1000,2000,"a:b"]\t${JSON.stringify(PROPS)}`
  const e = decodeQueuedEvent(old)
  assert.equal(e.stepProperties, undefined)
  assert.equal(e.shape, undefined)
  assert.deepEqual(stepPropertiesOf(e), PROPS)
  const now = queued(PROPS)
  for (const k of ['uuid', 'projectId', 'event', 'distinctId', 'timestamp', 'createdAt', 'elementsChain', 'properties'] as const) {
    assert.deepEqual(e[k], now[k], k)
  }
  assert.throws(() => decodeQueuedEvent(`[${JSON.stringify(UUID)},1,"e","d",1000,2000,"a:b",[],1]\t{}`), /malformed/)
  assert.throws(() => decodeQueuedEvent(`[${JSON.stringify(UUID)},1,"e","d",1000,2000,"a:b",{}]\t{}`), /malformed/)
})

test('the shape is the same for the same keys and value types in the same order, and differs otherwise', () => {
  const shape = (p: Record<string, unknown>) => summariseProperties(p).shape
  assert.equal(shape({ a: 'x', b: 1 }), shape({ a: 'y', b: 2 }))
  assert.ok(Number.isSafeInteger(shape({ a: 'x' })))
  const different = [{ a: 'x' }, { a: 1 }, { a: true }, { a: null }, { b: 'x' }, { b: 'x', a: 1 }, { a: 'x', b: 1, c: 1 }, { ab: 1 }, {}]
  assert.equal(new Set([shape({ a: 'x', b: 1 }), ...different.map(shape)]).size, different.length + 1)
})

test('properties added without a parse: the text is what serialising the object would give, and the step properties and shape follow', () => {
  for (const props of [{ a: 1 }, {}]) {
    const e = queued(props)
    const added = withAddedProperties(e, { $group_0: 'c' }, 'groups:$group_0')
    assert.equal(added.properties, JSON.stringify({ ...props, $group_0: 'c' }))
    assert.deepEqual(added.stepProperties, { ...e.stepProperties, $group_0: 'c' })
    assert.notEqual(added.shape, e.shape)
    assert.equal(added.shape, withAddedProperties(queued(props), { $group_0: 'd' }, 'groups:$group_0').shape, 'the same change, the same shape')
    assert.deepEqual(propertiesOf(added), { ...props, $group_0: 'c' })
  }
  const e = queued({ $set: { a: 1 }, b: 2 })
  const rewritten = withRewrittenProperties(e, { b: 2 }, 'personless')
  assert.equal(rewritten.properties, '{"b":2}')
  assert.deepEqual(rewritten.stepProperties, {})
  assert.equal(propertiesOf(rewritten), rewritten.parsed!.value)
})
