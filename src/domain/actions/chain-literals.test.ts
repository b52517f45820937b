import assert from 'node:assert/strict'
import { test } from 'node:test'
import { requiredChainLiterals } from './chain-literals.ts'

test('element constraints give the texts a chain must contain', () => {
  assert.deepEqual(requiredChainLiterals({ tag_name: 'button', text: 'Say "hi" there', href: '/a%/b_long' , href_matching: 'contains' }), ['button', ' there', 'long'])
  assert.deepEqual(requiredChainLiterals({ selector: `div > a.btn[data-attr='cta']#go` }), ['div', 'a', 'btn', 'go', 'attr__data-attr', 'cta'])
})

test('regexes and steps without element constraints give no literal', () => {
  assert.deepEqual(requiredChainLiterals({ text: 'abc', text_matching: 'regex', event: 'x', url: 'y' }), [])
})
