import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { elementsToString, type Element } from '../events/elements-to-string.ts'
import { compileAction, type ActionStepDefinition } from './match-action.ts'

export interface ActionGoldenEvent {
  event: string
  properties: Record<string, unknown>
  elements?: Element[]
  person_properties?: Record<string, unknown>
}
type Case = [string, { steps: ActionStepDefinition[]; event: ActionGoldenEvent }, { matches: boolean }]
const cases = JSON.parse(readFileSync(new URL('../../../test/golden/action-steps.json', import.meta.url), 'utf8')) as Case[]
const NOW = Date.parse('2026-01-01T00:00:00Z')

for (const [name, input, expected] of cases) {
  test(`action: ${name}`, () => {
    const e = input.event
    const match = compileAction(input.steps)
    const actual = match(
      { event: e.event, properties: e.properties, elementsChain: elementsToString(e.elements ?? []), personProperties: e.person_properties },
      NOW,
    )
    assert.equal(actual, expected.matches)
  })
}

test('a catastrophic text regex against a 10,000-character element text answers', () => {
  const chain = elementsToString([{ tag_name: 'a', text: `${'a'.repeat(10_000)}!` }])
  const match = compileAction([{ text: '^(a+)+$', text_matching: 'regex' }])
  assert.equal(match({ event: '$autocapture', properties: {}, elementsChain: chain }, NOW), false)
})

test('a catastrophic property regex against a 10,000-character value answers', () => {
  const match = compileAction([{ properties: [{ key: 'q', operator: 'regex', value: '^(a+)+$', type: 'event' }] }])
  assert.equal(match({ event: 'x', properties: { q: `${'a'.repeat(10_000)}!` }, elementsChain: '' }, NOW), false)
})

test('the chain is not parsed when no step reads elements', () => {
  // A chain that would not survive parsing is never looked at by an event-name step.
  const match = compileAction([{ event: 'x' }])
  assert.equal(match({ event: 'x', properties: {}, elementsChain: 'a:text="'.repeat(1000) }, NOW), true)
})

test('a stored filter that is not an object with a key matches nothing', () => {
  const match = compileAction([{ properties: [null, 'x', { value: 1 }] as unknown as [] }])
  assert.equal(match({ event: 'x', properties: {}, elementsChain: '' }, NOW), false)
})

test('step properties that are not a list read as no filter', () => {
  const match = compileAction([{ event: 'x', properties: { key: 'a' } as unknown as [] }])
  assert.equal(match({ event: 'x', properties: {}, elementsChain: '' }, NOW), true)
})

test('an action whose steps do not all name an event matches an event of another name through the step that names none', () => {
  const match = compileAction([{ event: 'signed up' }, { url: '/pricing', url_matching: 'contains' }])
  assert.equal(match({ event: '$pageview', properties: { $current_url: 'https://x.test/pricing' }, elementsChain: '' }, NOW), true)
  assert.equal(match({ event: '$pageview', properties: { $current_url: 'https://x.test/docs' }, elementsChain: '' }, NOW), false)
  assert.equal(match({ event: 'signed up', properties: {}, elementsChain: '' }, NOW), true)
})

test('an action whose steps all name events reads no property of an event of another name', () => {
  const properties = new Proxy({}, { get: () => assert.fail('properties read') })
  const match = compileAction([{ event: 'signed up', url: '/a' }, { event: 'paid', properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }] }])
  assert.equal(match({ event: '$pageview', properties, elementsChain: '' }, NOW), false)
})
