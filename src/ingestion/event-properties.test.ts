import assert from 'node:assert/strict'
import { test } from 'node:test'
import { propertiesOf } from './event-properties.ts'
import { decodeQueuedEvent, encodeQueuedEvent } from './queued-event.ts'

const queued = (properties: Record<string, unknown>) =>
  decodeQueuedEvent(
    encodeQueuedEvent(1, {
      uuid: '0190e0a0-0000-7000-8000-000000000001', event: 'e', distinctId: 'd', properties, timestamp: new Date(0), createdAt: new Date(0), elementsChain: '',
    } as Parameters<typeof encodeQueuedEvent>[1]),
  )

test('propertiesOf parses an event once and hands every later reader the same object; the text is untouched', () => {
  const e = queued({ a: 1, nested: { b: [1, 2] } })
  const text = e.properties
  const first = propertiesOf(e)
  assert.deepEqual(first, { a: 1, nested: { b: [1, 2] } })
  assert.equal(propertiesOf(e), first, 'the same object, not a second parse')
  // A step hands on a copy of the event (spread), as the persons step does: still no parse.
  assert.equal(propertiesOf({ ...e }), first)
  assert.equal(e.properties, text)
})

test('propertiesOf parses again when a step rewrote the text without handing on the object', () => {
  const e = queued({ a: 1, $set: { x: 1 } })
  propertiesOf(e)
  const rewritten = { ...e, properties: '{"a":1}' }
  assert.deepEqual(propertiesOf(rewritten), { a: 1 })
  assert.deepEqual(propertiesOf(e), { a: 1, $set: { x: 1 } }, 'the original keeps its own')
})

test('propertiesOf throws on text that is not a JSON object', () => {
  for (const bad of ['[1]', 'null', '"s"', '{"a":']) {
    assert.throws(() => propertiesOf({ ...queued({}), properties: bad }), `${bad}`)
  }
})
