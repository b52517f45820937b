import assert from 'node:assert/strict'
import { test } from 'node:test'
import { cleanText, MAX_JSON_DEPTH, sanitiseParsedJson } from './sanitise-json.ts'

test('lone surrogates and NUL become U+FFFD in keys and values at any depth; pairs are kept', () => {
  const parsed = JSON.parse('{"e\\ud800":"a\\udc00b","ok":"\\ud83d\\ude00","n":["x\\u0000",{"k\\u0000":{"deep":"\\udfff"}}],"__proto__":"p\\u0000"}')
  const out = sanitiseParsedJson(parsed)!.value as Record<string, unknown>
  assert.deepEqual(Object.keys(out), ['e\uFFFD', 'ok', 'n', '__proto__'])
  assert.equal(out['e\uFFFD'], 'a\uFFFDb')
  assert.equal(out.ok, '\u{1F600}')
  assert.deepEqual(out.n, ['x\uFFFD', { 'k\uFFFD': { deep: '\uFFFD' } }])
  assert.equal(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, 'p\uFFFD')
  assert.equal(Object.getPrototypeOf(out), Object.prototype)
  // What is stored serialises to JSON without escaped surrogates.
  assert.doesNotMatch(JSON.stringify(out), /\\ud[89a-f]/i)
  assert.equal(sanitiseParsedJson('\ud800')!.value, '\uFFFD')
  assert.equal(cleanText('plain'), 'plain')
})

test('depth is measured without recursion: 128 levels pass, 129 and 100,000 are refused', () => {
  const nest = (n: number) => JSON.parse('['.repeat(n) + ']'.repeat(n))
  assert.notEqual(sanitiseParsedJson(nest(MAX_JSON_DEPTH)), null)
  assert.equal(sanitiseParsedJson(nest(MAX_JSON_DEPTH + 1)), null)
  assert.equal(sanitiseParsedJson(nest(100_000)), null)
  assert.equal(sanitiseParsedJson(JSON.parse('{"a":'.repeat(129) + '1' + '}'.repeat(129))), null)
})

test('clean values are returned as they are', () => {
  const parsed = { a: 'b', c: [1, 'd', { e: null }] }
  assert.equal(sanitiseParsedJson(parsed)!.value, parsed)
  assert.deepEqual(parsed, { a: 'b', c: [1, 'd', { e: null }] })
})
