import assert from 'node:assert/strict'
import { test } from 'node:test'
import { elementsToString } from './elements-to-string.ts'
import { MAX_ELEMENTS_CHAIN_LENGTH, parseElementsChain } from './parse-elements-chain.ts'

test('a chain reads as PostHog reads it: tag, classes, known fields and the other attributes, innermost first', () => {
  const [button, div] = parseElementsChain('button.btn.primary:attr__id="buy"attr_id="buy"href="/pay"nth-child="2"nth-of-type="1"text="Buy now";div.cart:nth-child="1"nth-of-type="1"')
  assert.deepEqual(button, {
    text: 'Buy now', tag_name: 'button', attr_class: ['btn', 'primary'], href: '/pay', attr_id: 'buy', nth_child: 2, nth_of_type: 1,
    attributes: { attr__id: 'buy' }, order: 0,
  })
  assert.equal(div.tag_name, 'div')
  assert.deepEqual(div.attr_class, ['cart'])
  assert.equal(div.order, 1)
})

test('a `;` or `:` inside a quoted value is part of the value, not a new element', () => {
  const chain = 'a.link:attr__style="color: red; margin: 0"attr__onclick="go(); return false"nth-child="1"nth-of-type="1"text="Next; page";body:nth-child="1"nth-of-type="1"'
  const elements = parseElementsChain(chain)
  assert.deepEqual(elements.map((e) => e.tag_name), ['a', 'body'])
  assert.equal(elements[0].attributes.attr__style, 'color: red; margin: 0')
  assert.equal(elements[0].attributes.attr__onclick, 'go(); return false')
  assert.equal(elements[0].text, 'Next; page')
})

test('escaped quotes stay escaped in values, as PostHog keeps them', () => {
  const [el] = parseElementsChain('span:nth-child="1"nth-of-type="1"text="say \\"hi\\"; bye"')
  assert.equal(el.text, 'say \\"hi\\"; bye')
})

test('what elementsToString writes reads back field for field', () => {
  const chain = elementsToString([
    { tag_name: 'button', attr_class: ['b', 'a'], text: 'Pay; now', nth_child: 3, nth_of_type: 1, attr_id: 'x', attributes: { attr__style: 'a:b;c' } },
    { tag_name: 'form', nth_child: 1, nth_of_type: 1 },
  ])
  const [button, form] = parseElementsChain(chain)
  assert.deepEqual([button.tag_name, button.attr_class, button.text, button.nth_child, button.attr_id, button.attributes], ['button', ['a', 'b'], 'Pay; now', 3, 'x', { attr__style: 'a:b;c' }])
  assert.equal(form.tag_name, 'form')
})

test('an empty chain, a class with a colon, and a chain longer than PostHog reads', () => {
  assert.deepEqual(parseElementsChain(''), [])
  const [el] = parseElementsChain('div.md:flex.hover:bg:nth-child="1"nth-of-type="1"')
  assert.deepEqual(el.attr_class, ['md:flex', 'hover:bg'])
  const long = Array.from({ length: 2000 }, (_, i) => `div:nth-child="${i}"nth-of-type="1"`).join(';')
  assert.ok(long.length > MAX_ELEMENTS_CHAIN_LENGTH)
  const parsed = parseElementsChain(long)
  assert.ok(parsed.length < 2000 && parsed.length > 400)
  assert.equal(parsed.at(-1)!.nth_of_type, 1, 'the last element kept is whole')
})
