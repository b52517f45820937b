import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseLenientJson, replaceNonFiniteLiterals } from './parse-lenient-json.ts'

test('non-finite literals outside strings become null; strings are untouched', () => {
  assert.equal(replaceNonFiniteLiterals('[NaN,"NaN \\" Infinity",-Infinity,Infinity]'), '[null,"NaN \\" Infinity",null,null]')
})

test('valid JSON is parsed as is, invalid JSON still throws', () => {
  assert.deepEqual(parseLenientJson('{"a":[1,2]}'), { a: [1, 2] })
  assert.throws(() => parseLenientJson('{"a":'), SyntaxError)
  assert.throws(() => parseLenientJson('{"a":NaN'), SyntaxError)
})
