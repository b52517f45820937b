import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RawEvent } from './extract-events.ts'
import { normaliseEvent, type NormaliseContext, type NormaliseResult } from './normalise-event.ts'

const now = new Date('2024-03-01T12:00:00.000Z')
const ctx = (extra: Partial<NormaliseContext> = {}): NormaliseContext => ({
  now,
  randomBytes: (n) => new Uint8Array(n).fill(0xab),
  ...extra,
})
const raw = (extra: RawEvent = {}): RawEvent => ({ event: '$pageview', distinct_id: 'user-1', ...extra })

function ok(result: NormaliseResult) {
  assert.equal(result.kind, 'ok')
  if (result.kind !== 'ok') throw new Error('dropped')
  return result
}
const dropReason = (result: NormaliseResult) => (result.kind === 'drop' ? result.reason : null)

test('a plain event keeps its name, distinct id and properties', () => {
  const { event, warnings } = ok(normaliseEvent(raw({ properties: { a: 1 } }), ctx()))
  assert.equal(event.event, '$pageview')
  assert.equal(event.distinctId, 'user-1')
  assert.deepEqual(event.properties, { a: 1 })
  assert.equal(event.elementsChain, '')
  assert.equal(event.createdAt, now)
  assert.equal(event.timestamp.getTime(), now.getTime())
  assert.deepEqual(warnings, [])
})

test('events without a name, or with an empty or non-string one, are dropped', () => {
  assert.equal(dropReason(normaliseEvent({ distinct_id: 'u' }, ctx())), 'missing_event_name')
  assert.equal(dropReason(normaliseEvent(raw({ event: '' }), ctx())), 'missing_event_name')
  assert.equal(dropReason(normaliseEvent(raw({ event: 5 }), ctx())), 'missing_event_name')
})

test('$performance_event is dropped as PostHog capture does', () => {
  assert.equal(dropReason(normaliseEvent(raw({ event: '$performance_event' }), ctx())), 'performance_event')
})

test('a missing or null distinct id is dropped; an empty one has its own reason', () => {
  assert.equal(dropReason(normaliseEvent({ event: 'e' }, ctx())), 'missing_distinct_id')
  assert.equal(dropReason(normaliseEvent(raw({ distinct_id: null }), ctx())), 'missing_distinct_id')
  assert.equal(dropReason(normaliseEvent(raw({ distinct_id: '' }), ctx())), 'empty_distinct_id')
})

test('distinct id falls back to $distinct_id, then properties.distinct_id', () => {
  assert.equal(ok(normaliseEvent({ event: 'e', $distinct_id: 'd1' }, ctx())).event.distinctId, 'd1')
  assert.equal(ok(normaliseEvent({ event: 'e', properties: { distinct_id: 'd2' } }, ctx())).event.distinctId, 'd2')
  assert.equal(ok(normaliseEvent(raw({ distinct_id: 'top', properties: { distinct_id: 'p' } }), ctx())).event.distinctId, 'top')
})

test('non-string distinct ids are written as JSON text, as Rust capture does', () => {
  assert.equal(ok(normaliseEvent(raw({ distinct_id: 123 }), ctx())).event.distinctId, '123')
  assert.equal(ok(normaliseEvent(raw({ distinct_id: 0 }), ctx())).event.distinctId, '0')
  assert.equal(ok(normaliseEvent(raw({ distinct_id: true }), ctx())).event.distinctId, 'true')
  assert.equal(ok(normaliseEvent(raw({ distinct_id: { a: 1 } }), ctx())).event.distinctId, '{"a":1}')
})

test('distinct ids are cut to 200 characters without splitting a surrogate pair', () => {
  assert.equal(ok(normaliseEvent(raw({ distinct_id: 'x'.repeat(250) }), ctx())).event.distinctId.length, 200)
  const emoji = ok(normaliseEvent(raw({ distinct_id: '😀'.repeat(201) }), ctx())).event.distinctId
  assert.equal(Array.from(emoji).length, 200)
})

test('NUL characters in distinct ids become U+FFFD', () => {
  assert.equal(ok(normaliseEvent(raw({ distinct_id: 'a\u0000b' }), ctx())).event.distinctId, 'a\uFFFDb')
})

test('properties that are not an object drop the event; falsy ones become {}', () => {
  assert.equal(dropReason(normaliseEvent(raw({ properties: [1] }), ctx())), 'invalid_properties')
  assert.equal(dropReason(normaliseEvent(raw({ properties: 'x' }), ctx())), 'invalid_properties')
  assert.deepEqual(ok(normaliseEvent(raw({ properties: null }), ctx())).event.properties, {})
})

test('a valid client uuid is kept in canonical form', () => {
  const uuid = '0190F3A2-7B1C-7D4E-8F00-123456789ABC'
  assert.equal(ok(normaliseEvent(raw({ uuid }), ctx())).event.uuid, uuid.toLowerCase())
})

test('a missing uuid gets a UUIDv7 stamped with now', () => {
  const { event } = ok(normaliseEvent(raw(), ctx()))
  assert.match(event.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  assert.equal(parseInt(event.uuid.replace(/-/g, '').slice(0, 12), 16), now.getTime())
})

test('an invalid client uuid is replaced, with a warning', () => {
  const { event, warnings } = ok(normaliseEvent(raw({ uuid: 'not-a-uuid' }), ctx()))
  assert.match(event.uuid, /^[0-9a-f-]{36}$/)
  assert.deepEqual(warnings.map((w) => w.type), ['replaced_invalid_uuid'])
})

test('top-level $set and $set_once merge into properties, top level winning', () => {
  const { event } = ok(
    normaliseEvent(
      raw({
        $set: { plan: 'pro', a: 1 },
        $set_once: { first: 'x' },
        properties: { $set: { plan: 'free', b: 2 }, $set_once: { first: 'y', c: 3 } },
      }),
      ctx(),
    ),
  )
  assert.deepEqual(event.properties.$set, { plan: 'pro', a: 1, b: 2 })
  assert.deepEqual(event.properties.$set_once, { first: 'x', c: 3 })
})

test('posthog-python set(): a top-level $set with no properties', () => {
  const { event } = ok(normaliseEvent(raw({ event: '$set', $set: { email: 'a@b.c' } }), ctx()))
  assert.deepEqual(event.properties, { $set: { email: 'a@b.c' } })
})

test('the raw event and its properties are not mutated', () => {
  const input = raw({ properties: { $set: { a: 1 }, $elements: [{ tag_name: 'a' }] }, $set: { b: 2 } })
  const copy = structuredClone(input)
  normaliseEvent(input, ctx({ ip: '1.2.3.4', sentAt: now }))
  assert.deepEqual(input, copy)
})

test('with ownsRaw the raw properties object becomes the event’s, with the same result as a copy', () => {
  const make = () => raw({ properties: { $set: { a: 1 }, $elements: [{ tag_name: 'a' }], x: 1 }, $set: { b: 2 } })
  const input = make()
  const owned = ok(normaliseEvent(input, ctx({ ip: '1.2.3.4', sentAt: now, ownsRaw: true }))).event
  assert.equal(owned.properties, input.properties)
  assert.deepEqual(owned, ok(normaliseEvent(make(), ctx({ ip: '1.2.3.4', sentAt: now }))).event)
})

test('$ip defaults to the capture IP but never overrides the client’s', () => {
  assert.equal(ok(normaliseEvent(raw(), ctx({ ip: '10.0.0.1' }))).event.properties.$ip, '10.0.0.1')
  assert.equal(ok(normaliseEvent(raw({ properties: { $ip: '9.9.9.9' } }), ctx({ ip: '10.0.0.1' }))).event.properties.$ip, '9.9.9.9')
})

test('$sent_at records the request sent_at', () => {
  const sentAt = new Date('2024-03-01T12:00:05.000Z')
  assert.equal(ok(normaliseEvent(raw(), ctx({ sentAt }))).event.properties.$sent_at, '2024-03-01T12:00:05.000Z')
})

test('$autocapture $elements become the elements chain and leave properties', () => {
  const { event } = ok(
    normaliseEvent(
      raw({ event: '$autocapture', properties: { $event_type: 'click', $elements: [{ tag_name: 'button', $el_text: 'Buy', nth_child: 1, nth_of_type: 1 }] } }),
      ctx(),
    ),
  )
  assert.equal(event.elementsChain, 'button:nth-child="1"nth-of-type="1"text="Buy"')
  assert.deepEqual(event.properties, { $event_type: 'click' })
})

test('clock skew is corrected with the request sent_at', () => {
  const sentAt = new Date('2024-03-01T12:00:10.000Z') // client clock 10 s ahead
  const { event } = ok(normaliseEvent(raw({ timestamp: '2024-03-01T11:00:10.000Z' }), ctx({ sentAt })))
  assert.equal(event.timestamp.toISOString(), '2024-03-01T11:00:00.000Z')
})

test('$ignore_sent_at keeps the client timestamp as sent', () => {
  const sentAt = new Date('2024-03-01T12:00:10.000Z')
  const input = raw({ timestamp: '2024-03-01T11:00:10.000Z', properties: { $ignore_sent_at: true } })
  assert.equal(ok(normaliseEvent(input, ctx({ sentAt }))).event.timestamp.toISOString(), '2024-03-01T11:00:10.000Z')
})

test('an invalid timestamp falls back to now with a warning', () => {
  const { event, warnings } = ok(normaliseEvent(raw({ timestamp: 'soon' }), ctx()))
  assert.equal(event.timestamp.getTime(), now.getTime())
  assert.deepEqual(warnings.map((w) => w.type), ['ignored_invalid_timestamp'])
})
