import assert from 'node:assert/strict'
import { test } from 'node:test'
import { classifyFailure } from './classify-failure.ts'

const errno = (code: string, message: string) => Object.assign(new Error(message), { code })

test('store and disk failures are transient', () => {
  for (const err of [
    errno('ENOSPC', "ENOSPC: no space left on device, write"),
    errno('EIO', 'EIO: i/o error, write'),
    errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
    // DuckDB's own messages, as seen with the WAL on a full tmpfs.
    new Error('TransactionContext Error: Failed to commit: Could not write file "/x/events.duckdb.wal": No space left on device'),
    new Error('IO Error: Could not read from file "/x/events.duckdb": Input/output error'),
    new Error('Connection Error: Connection already closed!'),
    new Error('FATAL Error: Failed: database has been invalidated because of a previous fatal error.'),
    new Error('PGlite is closed'),
    new Error('terminating connection due to administrator command'),
    new Error('outer', { cause: errno('ENOSPC', 'no space') }),
    Object.assign(new Error('anything'), { transient: true }),
  ]) {
    assert.equal(classifyFailure(err), 'transient', String(err))
  }
})

test("errors about a row's values are permanent", () => {
  for (const err of [
    new Error('Conversion Error: Could not convert string "abc" to INT32'),
    new Error('Invalid Input Error: Malformed JSON at byte 3'),
    new Error('Constraint Error: NOT NULL constraint failed: events.timestamp'),
    new Error('invalid input syntax for type uuid: "x"'),
    Object.assign(new Error('IO Error: but the adapter knows better'), { transient: false }),
  ]) {
    assert.equal(classifyFailure(err), 'permanent', String(err))
  }
})

test('anything else is unknown', () => {
  for (const err of [new Error('something odd happened'), new TypeError("Cannot read properties of undefined (reading 'x')"), 'a string', null, undefined, 42]) {
    assert.equal(classifyFailure(err), 'unknown', String(err))
  }
})
