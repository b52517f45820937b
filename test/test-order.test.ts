import assert from 'node:assert/strict'
import { test } from 'node:test'
import { mergeDurations, orderByDuration } from '../scripts/test-order.mjs'

// The runner's file order (scripts/test-order.mjs): longest first, so its slots finish together.
test('test files start longest first by their recorded durations; equal ones in name order', () => {
  const durations = { 'src/a.test.ts': 2, 'test/e2e/b.test.ts': 240, 'test/e2e/c.test.ts': 30, 'test/e2e/d.test.ts': 30 }
  assert.deepEqual(orderByDuration(['src/a.test.ts', 'test/e2e/b.test.ts', 'test/e2e/c.test.ts', 'test/e2e/d.test.ts'], durations), [
    'test/e2e/b.test.ts', 'test/e2e/c.test.ts', 'test/e2e/d.test.ts', 'src/a.test.ts',
  ])
})

test('a file with no recorded duration counts as the median of its directory, else of all files, else in name order', () => {
  const durations = { 'src/a.test.ts': 1, 'src/b.test.ts': 3, 'test/e2e/x.test.ts': 100, 'test/e2e/y.test.ts': 200, 'test/e2e/z.test.ts': 400 }
  // new.e2e: 200 (median of e2e), ties with y and comes first by name; new-unit: 2 (median of src: (1 + 3) / 2).
  const files = ['src/a.test.ts', 'src/b.test.ts', 'src/new-unit.test.ts', 'test/e2e/new.test.ts', 'test/e2e/x.test.ts', 'test/e2e/y.test.ts', 'test/e2e/z.test.ts']
  assert.deepEqual(orderByDuration(files, durations), [
    'test/e2e/z.test.ts', 'test/e2e/new.test.ts', 'test/e2e/y.test.ts', 'test/e2e/x.test.ts', 'src/b.test.ts', 'src/new-unit.test.ts', 'src/a.test.ts',
  ])
  // A directory with none recorded: the median of all five (100).
  assert.deepEqual(orderByDuration(['src/a.test.ts', 'src/b.test.ts', 'test/web/w.test.ts'], durations), ['test/web/w.test.ts', 'src/b.test.ts', 'src/a.test.ts'])
  assert.deepEqual(orderByDuration(['test/web/w.test.ts', 'test/e2e/z.test.ts'], { 'src/a.test.ts': 1, 'test/e2e/z.test.ts': 3 }), ['test/e2e/z.test.ts', 'test/web/w.test.ts'])
  assert.deepEqual(orderByDuration(['b.test.ts', 'a.test.ts'], {}), ['a.test.ts', 'b.test.ts'])
})

test('a run\'s measurements replace the recorded ones; files that are gone are dropped; tenths of a second, keys sorted', () => {
  const merged = mergeDurations({ 'b.test.ts': 5, 'gone.test.ts': 9, 'a.test.ts': 1 }, { 'b.test.ts': 7.26, 'c.test.ts': 0.04 }, ['a.test.ts', 'b.test.ts', 'c.test.ts'])
  assert.deepEqual(Object.entries(merged), [['a.test.ts', 1], ['b.test.ts', 7.3], ['c.test.ts', 0]])
})
