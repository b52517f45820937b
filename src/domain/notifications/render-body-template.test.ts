import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DEFAULT_BODY_TEMPLATE, renderBodyTemplate, type TemplateGlobals } from './render-body-template.ts'

const globals: TemplateGlobals = {
  event: { uuid: 'u-1', event: 'signed up', distinct_id: 'd"1', timestamp: '2026-01-02T03:04:05.000Z', properties: { plan: 'pro', seats: 3, nested: { a: [1, 2] } } },
  person: { id: 'p-1', properties: { email: 'a@b.c' } },
  project: { id: 7, name: 'Shop' },
}
const render = (t: string) => JSON.parse(renderBodyTemplate(t, globals))

test('the default body is the whole event and person', () => {
  assert.deepEqual(render(DEFAULT_BODY_TEMPLATE), { event: globals.event, person: globals.person })
})

test('each placeholder as a JSON value keeps its type; missing ones are null', () => {
  assert.deepEqual(
    render('{"u": {event.uuid}, "n": {event.event}, "d": {event.distinct_id}, "t": {event.timestamp}, "s": {event.properties.seats}, "x": {event.properties.nested}, "e": {person.properties.email}, "p": {project.name}, "m": {event.properties.missing}}'),
    { u: 'u-1', n: 'signed up', d: 'd"1', t: '2026-01-02T03:04:05.000Z', s: 3, x: { a: [1, 2] }, e: 'a@b.c', p: 'Shop', m: null },
  )
})

test('inside a string a placeholder becomes text, quotes escaped; an escaped quote does not end the string', () => {
  assert.deepEqual(render('{"text": "{person.properties.email} signed up as {event.distinct_id} with {event.properties.seats} seats \\"{event.properties.plan}\\""}'), {
    text: 'a@b.c signed up as d"1 with 3 seats "pro"',
  })
})

test('braces that are not placeholders stay; a template that is not JSON is refused', () => {
  assert.deepEqual(render('{"a": "{not.a.placeholder}", "b": {"c": 1}}'), { a: '{not.a.placeholder}', b: { c: 1 } })
  assert.throws(() => renderBodyTemplate('{"a": {event.uuid}', globals), /does not give JSON/)
})
