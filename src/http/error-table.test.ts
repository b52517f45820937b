import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { ERROR_TABLE } from './error-table.ts'
import { toWireError } from './error-handler.ts'
import { AppError, type ErrorCode } from '../shared/errors.ts'

test('every error code has a line in docs/errors.md', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')
  for (const code of Object.keys(ERROR_TABLE)) assert.match(doc, new RegExp(`\\| \`${code}\` \\|`), code)
})

test('an AppError becomes PostHog’s error body with its status', () => {
  for (const code of Object.keys(ERROR_TABLE) as ErrorCode[]) {
    const { status, body } = toWireError(new AppError(code, 'why', 'field'))
    assert.equal(status, ERROR_TABLE[code].status)
    assert.deepEqual(Object.keys(body), ['type', 'code', 'detail', 'attr'])
    assert.equal(body.detail, 'why')
    assert.equal(body.attr, 'field')
  }
})

test('a validation error carries its sub-code on the wire', () => {
  const { status, body } = toWireError(new AppError('validation_error', 'This field is required.', 'key', { subCode: 'required' }))
  assert.equal(status, 400)
  assert.deepEqual(body, { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'key' })
})

test('an unknown error becomes a generic 500 without its message', () => {
  const { status, body } = toWireError(new Error('secret internals'))
  assert.equal(status, 500)
  assert.equal(body.type, 'server_error')
  assert.doesNotMatch(body.detail, /secret/)
})
