import assert from 'node:assert/strict'
import test from 'node:test'
import { compileFlags } from './compile-flags.ts'
import { evaluateFlags } from './evaluate-flags.ts'

test('the same outcome of a flag is one shared frozen result, different outcomes are not', () => {
  const compiled = compileFlags([{ id: 1, key: 'half', active: true, filters: { groups: [{ properties: [], rollout_percentage: 50 }] } }])
  const results = Array.from({ length: 40 }, (_, i) => evaluateFlags(compiled, { distinctId: `u${i}`, now: 0 }).flags[0])
  const on = results.filter((r) => r.enabled)
  const off = results.filter((r) => !r.enabled)
  assert.ok(on.length > 1 && off.length > 1)
  assert.ok(on.every((r) => r === on[0]) && off.every((r) => r === off[0]))
  assert.notEqual(on[0], off[0])
  assert.ok(Object.isFrozen(on[0]) && Object.isFrozen(on[0].reason))
})
