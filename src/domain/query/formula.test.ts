import assert from 'node:assert/strict'
import { test } from 'node:test'
import { evaluateFormula, parseFormula } from './formula.ts'
import { AppError } from '../../shared/errors.ts'

test('formulas: precedence, parentheses, unary minus, lower-case letters, division by zero as 0', () => {
  const at = (text: string, values: number[]) => evaluateFormula(parseFormula(text, values.length, 'f'), values)
  assert.equal(at('A+B*2', [1, 3]), 7)
  assert.equal(at('(A+B)*2', [1, 3]), 8)
  assert.equal(at('a - -b', [1, 3]), 4)
  assert.equal(at('A / B', [1, 0]), 0)
  assert.equal(at('A / 4 + 0.5', [2]), 1)
  assert.equal(at(' C ', [1, 2, 3]), 3)
})

test('formulas: anything but letters, numbers, operators and parentheses is refused with the field named', () => {
  for (const text of ['A+', 'A B', 'eval(1)', 'A;B', 'A**B', '()', 'process.exit()', 'C', '1e3', 'A+(B']) {
    assert.throws(() => parseFormula(text, 2, 'query.trendsFilter.formula'), (err: unknown) => err instanceof AppError && err.attr === 'query.trendsFilter.formula', text)
  }
})
