import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AppError } from '../shared/errors.ts'
import { depthExceeds, readBody, readBool, readChoice, readDateTime, readInt, readString } from './drf-fields.ts'

function failure(fn: () => unknown): { attr: string | null; code: unknown; message: string } {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof AppError)
    return { attr: err.attr, code: err.extra?.subCode, message: err.message }
  }
  throw new Error('expected a validation error')
}

test('readString accepts numbers, trims, and refuses blank, null and non-scalars as DRF does', () => {
  assert.equal(readString(5, 'a'), '5')
  assert.equal(readString('  x ', 'a'), 'x')
  assert.deepEqual(failure(() => readString(' ', 'a')), { attr: 'a', code: 'blank', message: 'This field may not be blank.' })
  assert.equal(failure(() => readString(null, 'a')).code, 'null')
  assert.equal(failure(() => readString(true, 'a')).message, 'Not a valid string.')
  assert.equal(failure(() => readString('abc', 'a', { maxLength: 2 })).code, 'max_length')
})

test('readBool and readInt take the spellings DRF takes', () => {
  assert.equal(readBool('yes', 'b'), true)
  assert.equal(readBool(0, 'b'), false)
  assert.equal(failure(() => readBool('maybe', 'b')).message, 'Must be a valid boolean.')
  assert.equal(readInt('21', 'i'), 21)
  assert.equal(failure(() => readInt(1.5, 'i')).message, 'A valid integer is required.')
})

test('readChoice matches on the string form and quotes the input like Python', () => {
  assert.equal(readChoice('37', 'r', [21, 37] as const), 37)
  assert.equal(failure(() => readChoice(true, 'r', [21, 37] as const)).message, '"True" is not a valid choice.')
})

test('readDateTime reads ISO 8601 with or without zone (UTC) and refuses the rest', () => {
  assert.equal(readDateTime('2024-01-02T03:04:05+01:00', 'd')!.toISOString(), '2024-01-02T02:04:05.000Z')
  assert.equal(readDateTime('2024-01-02T03:04', 'd')!.toISOString(), '2024-01-02T03:04:00.000Z')
  assert.equal(readDateTime('2024-01-02', 'd')!.toISOString(), '2024-01-02T00:00:00.000Z')
  assert.equal(failure(() => readDateTime('soon', 'd')).code, 'invalid_input')
})

test('readInt keeps integers inside the 32-bit id columns unless told otherwise', () => {
  assert.equal(readInt(2_147_483_647, 'i'), 2_147_483_647)
  assert.deepEqual(failure(() => readInt(999999999999, 'use_dashboard')), { attr: 'use_dashboard', code: 'max_value', message: 'Ensure this value is less than or equal to 2147483647.' })
  assert.equal(failure(() => readInt('-2147483649', 'i')).code, 'min_value')
  assert.equal(failure(() => readInt(1e20, 'i')).code, 'max_value')
  assert.equal(failure(() => readInt('1'.repeat(30), 'i')).code, 'invalid_input')
  assert.equal(failure(() => readInt(5, 'i', { max: 4 })).code, 'max_value')
})

test('readBody refuses a field nested past 128 levels, at any depth, without recursion', () => {
  const nest = (n: number): unknown => JSON.parse('['.repeat(n) + ']'.repeat(n))
  assert.deepEqual(readBody({ ok: nest(127) }), { ok: nest(127) })
  assert.deepEqual(failure(() => readBody({ ok: 1, filters: nest(128) })).attr, 'filters')
  assert.equal(failure(() => readBody({ query: nest(100_000) })).code, 'invalid_input')
  assert.equal(depthExceeds({ a: { b: [1] } }, 3), false)
  assert.equal(depthExceeds({ a: { b: [[]] } }, 3), true)
})
