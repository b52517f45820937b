import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compileRegex } from './compile-regex.ts'
import { matchProperty } from './match-property.ts'

// Catastrophic for a backtracking engine: each extra character doubles the work of V8's RegExp.
const CATASTROPHIC = ['^(a+)+$', '^(a|a)*$', '^(a|aa)+$', '(x+x+)+y', '^(\\w+\\s?)*$']
const LONG = `${'a'.repeat(10_000)}!`

test('user regexes compile to the linear-time RE2 engine, not a backtracking RegExp', () => {
  for (const pattern of CATASTROPHIC) {
    const re = compileRegex(pattern)
    assert.ok(re, pattern)
    assert.equal(re.engine, 're2')
    assert.ok(!(re instanceof RegExp))
  }
})

test('catastrophic patterns answer on a 10,000-character input', () => {
  for (const pattern of CATASTROPHIC) assert.equal(compileRegex(pattern)!.test(LONG), false, pattern)
  assert.equal(compileRegex('^(a+)+$')!.test('a'.repeat(10_000)), true)
  assert.equal(matchProperty({ key: 'p', operator: 'regex', value: '^(a+)+$' }, { p: LONG }), false)
  assert.equal(matchProperty({ key: 'p', operator: 'not_regex', value: '^(a+)+$' }, { p: LONG }), true)
})

test('patterns that need backtracking (look-arounds, back-references) are invalid and match nothing', () => {
  for (const pattern of ['a(?=b)', '(?<!x)a', '(a)\\1']) {
    assert.equal(compileRegex(pattern), null, pattern)
    assert.equal(matchProperty({ key: 'p', operator: 'regex', value: pattern }, { p: 'ab aa' }), false)
    assert.equal(matchProperty({ key: 'p', operator: 'not_regex', value: pattern }, { p: 'ab aa' }), false)
  }
})

test('RE2 syntax that JavaScript lacks: inline flags anywhere, named groups, \\A and \\z', () => {
  assert.equal(compileRegex('(?i)abc')!.test('xABCx'), true)
  assert.equal(compileRegex('a(?i)bc')!.test('aBC'), true)
  assert.equal(compileRegex('(?P<n>a)b')!.test('ab'), true)
  assert.equal(compileRegex('\\Aab\\z')!.test('ab'), true)
  assert.equal(compileRegex('(')!, null)
})
