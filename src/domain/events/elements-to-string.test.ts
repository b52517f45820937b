import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { elementsToString, extractElements, takeElementsChain, type Element } from './elements-to-string.ts'

type Golden = [string, { elements?: Element[]; $elements?: unknown[] }, { chain: string }]

const cases = JSON.parse(
  readFileSync(new URL('../../../test/golden/events-elements-chain.json', import.meta.url), 'utf8'),
) as Golden[]

for (const [name, input, expected] of cases) {
  test(`golden elements chain: ${name}`, () => {
    const elements = input.elements ?? extractElements(input.$elements ?? [])
    assert.equal(elementsToString(elements), expected.chain)
  })
}

test('extractElements keeps every attr__ key with its prefix', () => {
  const [el] = extractElements([{ tag_name: 'input', attr__type: 'email', attr__class: 'a b', nth_child: 3 }])
  assert.deepEqual(el, { attributes: { attr__type: 'email', attr__class: 'a b' }, tag_name: 'input', attr_class: ['a', 'b'], nth_child: 3 })
})

test('extractElements skips entries that are not objects', () => {
  assert.equal(extractElements([null, 'x', 3, { tag_name: 'a' }]).length, 1)
})

test('elementsToString does not reorder the caller’s class array', () => {
  const classes = ['b', 'a']
  elementsToString([{ tag_name: 'p', attr_class: classes }])
  assert.deepEqual(classes, ['b', 'a'])
})

test('takeElementsChain prefers a given $elements_chain and removes both keys', () => {
  const props: Record<string, unknown> = { $elements_chain: 'a:nth-child="1"', $elements: [{ tag_name: 'div' }], x: 1 }
  assert.equal(takeElementsChain(props), 'a:nth-child="1"')
  assert.deepEqual(props, { x: 1 })
})

test('takeElementsChain serialises $elements when there is no chain', () => {
  const props: Record<string, unknown> = { $elements: [{ tag_name: 'div', nth_child: 1, nth_of_type: 1 }] }
  assert.equal(takeElementsChain(props), 'div:nth-child="1"nth-of-type="1"')
  assert.deepEqual(props, {})
})

test('takeElementsChain gives an empty chain for an empty or absent $elements', () => {
  assert.equal(takeElementsChain({ $elements: [] }), '')
  assert.equal(takeElementsChain({}), '')
})
