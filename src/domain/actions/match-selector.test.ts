import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import type { Element } from '../events/elements-to-string.ts'
import { elementsToString } from '../events/elements-to-string.ts'
import { matchSelector, parseSelector } from './match-selector.ts'
import { parseElementsChain, type ParsedElement } from './parse-elements-chain.ts'

type Case = [string, { elements: Element[]; selector: string }, { matches: boolean }]
const cases = JSON.parse(readFileSync(new URL('../../../test/golden/action-selectors.json', import.meta.url), 'utf8')) as Case[]

function parsed(elements: Element[]): ParsedElement[] {
  return elements.map((e) => ({ ...e, attr_class: e.attr_class ?? [], attributes: (e.attributes ?? {}) as Record<string, string> }))
}

for (const [name, input, expected] of cases) {
  test(`selector: ${name}`, () => {
    assert.equal(matchSelector(parseSelector(input.selector), parsed(input.elements)), expected.matches)
    // The same elements read back from their chain string answer the same.
    const fromChain = parseElementsChain(elementsToString(input.elements))
    assert.equal(matchSelector(parseSelector(input.selector), fromChain), expected.matches)
  })
}

test('a selector is parsed into parts with their requirements, outermost first', () => {
  assert.deepEqual(parseSelector(`main > a#go.btn.big[data-attr='x']:nth-child(2)`), [
    { requirements: { tag_name: 'main' }, directDescendant: false },
    {
      requirements: { tag_name: 'a', attr_id: 'go', attr_class: ['btn', 'big'], attributes: { 'data-attr': 'x' }, nth_child: 2 },
      directDescendant: true,
    },
  ])
})

test('escaped class names lose their backslashes', () => {
  assert.deepEqual(parseSelector('.md\\:flex')[0].requirements.attr_class, ['md:flex'])
})

test('an empty selector matches, even without elements', () => {
  assert.equal(matchSelector(parseSelector('  '), []), true)
})
