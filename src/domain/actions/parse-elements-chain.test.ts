import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { elementsToString, extractElements, type Element } from '../events/elements-to-string.ts'
import { parseElementsChain } from './parse-elements-chain.ts'

type Case = [string, { elements?: Element[]; $elements?: unknown[] }, { chain: string }]
const cases = JSON.parse(readFileSync(new URL('../../../test/golden/events-elements-chain.json', import.meta.url), 'utf8')) as Case[]

for (const [name, input, expected] of cases) {
  test(`a golden chain parses back to the same chain: ${name}`, () => {
    assert.equal(elementsToString(parseElementsChain(expected.chain)), expected.chain)
  })
}

test('parsing gives the fields PostHog reads from a chain', () => {
  const [, input, expected] = cases[0]
  const parsed = parseElementsChain(expected.chain)
  assert.deepEqual(parsed.map((e) => e.tag_name), ['a', 'button', 'div', 'div'])
  assert.deepEqual(parsed[0].attr_class, ['small'])
  assert.equal(parsed[0].href, '/a-url')
  assert.equal(parsed[0].text, 'bla bla')
  assert.equal(parsed[0].nth_child, 1)
  assert.equal(parsed[0].nth_of_type, 0)
  assert.deepEqual(parsed[0].attributes, { 'data-attr': 'something " that; could mess up', number: '33', prop: 'value', style: 'min-height: 100vh;' })
  assert.deepEqual(parsed[1].attr_class, ['btn', 'btn-primary'])
  assert.equal(parsed[3].attr_id, 'nested')
  assert.equal(input.elements?.length, parsed.length)
})

test('a class holding a colon stays in the class part', () => {
  const [el] = parseElementsChain('a.small.xy:z:attr_class="xyz small\\""href="/a-url"nth-child="0"nth-of-type="0"')
  assert.deepEqual(el.attr_class, ['small', 'xy:z'])
  assert.equal(el.attributes.attr_class, 'xyz small"')
})

test('elements extracted from $elements survive the round trip', () => {
  const elements = extractElements([{ tag_name: 'a', $el_text: 'Go "now"; ok', attr__href: '/x', attr__id: 'go', nth_child: 3, attr__class: 'b a' }])
  const chain = elementsToString(elements)
  assert.equal(elementsToString(parseElementsChain(chain)), chain)
  const [el] = parseElementsChain(chain)
  assert.equal(el.text, 'Go "now"; ok')
  assert.equal(el.attr_id, 'go')
  assert.deepEqual(el.attr_class, ['a', 'b'])
})

test('malformed chains parse without throwing', () => {
  for (const chain of ['', ';;;', 'a:text="unterminated', '"', 'div:nth-child="x"', ':="', 'a.b.c', `${'\\'.repeat(5000)}"`, 'a:k=""v="1"']) {
    assert.ok(Array.isArray(parseElementsChain(chain)), chain)
  }
  assert.equal(parseElementsChain('div:nth-child="x"')[0].nth_child, undefined)
  assert.deepEqual(parseElementsChain('a.b.c').map((e) => [e.tag_name, e.attr_class]), [['a', ['b', 'c']]])
})

test('a long chain parses in linear time (RE2), not by backtracking', () => {
  const chain = `a:text="${'\\"'.repeat(20_000)}`
  assert.equal(parseElementsChain(chain).length > 0, true)
})
