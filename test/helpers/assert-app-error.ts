import assert from 'node:assert/strict'
import { AppError } from '../../src/shared/errors.ts'

/** Asserts that `fn` throws an AppError with this code (and a detail matching `detail`, if given). */
export function rejects(fn: () => unknown, code: string, detail?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof AppError)
    assert.equal(err.code, code)
    if (detail) assert.match(err.message, detail)
    return true
  })
}
