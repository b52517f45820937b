import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { regexLiteralRuns, requiredMatchLiteral } from './string-literals.ts'
import { planStringMatch, testStringMatch } from './string-match.ts'

test('exact and contains: the value, or the longest run between LIKE wildcards', () => {
  assert.equal(requiredMatchLiteral('https://a.com/x', 'exact', 'contains'), 'https://a.com/x')
  assert.equal(requiredMatchLiteral('/pricing', null, 'contains'), '/pricing')
  assert.equal(requiredMatchLiteral('%/blog/%_post', 'contains', 'exact'), '/blog/')
  assert.equal(requiredMatchLiteral('%_%', 'contains', 'exact'), undefined)
  assert.equal(requiredMatchLiteral('', 'exact', 'exact'), undefined)
  assert.equal(requiredMatchLiteral('x', 'startswith', 'exact'), undefined)
})

test('regex: literal runs at the top level only, quantified characters left out', () => {
  assert.deepEqual(regexLiteralRuns('^https://shop\\.example\\.com/products/[0-9]+$'), ['https://shop.example.com/products/'])
  assert.deepEqual(regexLiteralRuns('ab*c'), ['a', 'c'])
  assert.deepEqual(regexLiteralRuns('ab+c'), ['ab', 'c'])
  assert.deepEqual(regexLiteralRuns('ab?c'), ['a', 'c'])
  assert.deepEqual(regexLiteralRuns('ab{2,3}c'), ['a', 'c'])
  assert.deepEqual(regexLiteralRuns('abc+?d'), ['abc', 'd'])
  assert.deepEqual(regexLiteralRuns('x(?:yz)?w'), ['x', 'w'])
  assert.deepEqual(regexLiteralRuns('(?s)/a.b\\d/c'), ['/a', 'b', '/c'])
  assert.deepEqual(regexLiteralRuns('a[])]b'), ['a', 'b'])
  assert.deepEqual(regexLiteralRuns('😀+é'), ['😀', 'é'])
  assert.equal(regexLiteralRuns('cats|dogs'), null)
  assert.equal(regexLiteralRuns('(?i)cats'), null)
  assert.equal(regexLiteralRuns('\\Qa.b\\E'), null)
  assert.equal(regexLiteralRuns('\\x41'), null)
  assert.equal(regexLiteralRuns('a{,2}'), null)
  assert.equal(regexLiteralRuns('[[:alpha:]]x'), null)
})

// A match of the plan implies the literal is in the value: checked on random patterns and values
// from an alphabet of regex metacharacters, so the reading of each construct is exercised.
const ALPHABET = ['a', 'b', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '1', ',', '|', '^', '$', '\\', '%', '_', '-', ':', '😀']
test('a value that matches always contains the required literal (property)', () => {
  let matched = 0 // values a regex matched (exact and contains are simple)
  const unit = fc.oneof({ weight: 2, arbitrary: fc.constantFrom('a', 'b', '1') }, { weight: 3, arbitrary: fc.constantFrom(...ALPHABET) })
  const text = (max: number) => fc.string({ unit, maxLength: max })
  // Values over the pattern's plain characters, so that many of them match.
  const value = fc.string({ unit: fc.constantFrom('a', 'b', '1', '😀', '.', ',', '-'), maxLength: 6 })
  fc.assert(
    fc.property(
      text(8),
      fc.array(fc.array(fc.oneof(value, fc.tuple(fc.nat(8), fc.nat(8))), { maxLength: 4 }), { minLength: 1, maxLength: 8 }),
      fc.constantFrom('regex', 'contains', 'exact'),
      (pattern, recipes, mode) => {
        const plan = planStringMatch(pattern, mode, 'contains')
        const literal = requiredMatchLiteral(pattern, mode, 'contains')
        if (literal === undefined) return
        // Values made of plain characters and slices of the pattern itself, so that many match.
        const values = recipes.map((parts) => parts.map((p) => (typeof p === 'string' ? p : pattern.slice(p[0], p[0] + p[1]))).join(''))
        for (const v of values) {
          if (!testStringMatch(plan, v)) continue
          if (mode === 'regex') matched++
          assert.ok(v.includes(literal), `${mode} ${pattern} matched ${v} without ${literal}`)
        }
      },
    ),
    { seed: 11, numRuns: 3000 },
  )
  assert.ok(matched > 200, `only ${matched} regex matches: the property would test little`)
})
