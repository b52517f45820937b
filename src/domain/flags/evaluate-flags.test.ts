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

test('flags sharing a filter get the same answer, and a filter on another bag or value is not shared', () => {
  const filter = (extra: object) => ({ key: 'plan', value: 'pro', operator: 'exact', ...extra })
  const flag = (key: string, properties: object[], aggregation?: number) => ({
    id: key, key, active: true,
    filters: { ...(aggregation !== undefined && { aggregation_group_type_index: aggregation }), groups: [{ properties, rollout_percentage: 100 }] },
  })
  const compiled = compileFlags(
    [
      flag('person-a', [filter({ type: 'person' })]),
      flag('person-b', [filter({ type: 'person' })]),
      flag('group', [filter({ type: 'group', group_type_index: 0 })], 0),
      flag('other-value', [filter({ type: 'person', value: 'free' })]),
      flag('cohort-in', [{ key: 'id', value: 7, type: 'cohort' }]),
      flag('cohort-not-in', [{ key: 'id', value: 7, type: 'cohort', operator: 'not_in' }]),
    ] as never,
    { groupTypeMapping: { '0': 'company' }, cohorts: [{ id: 7, filters: { properties: { type: 'AND', values: [filter({ type: 'person' })] } } }] as never },
  )
  assert.equal(compiled.filterSlots, 4) // plan=pro on the person, on the company, plan=free, cohort 7 (in / not in)
  const values = (ctx: object) => Object.fromEntries(evaluateFlags(compiled, { distinctId: 'u', now: 0, ...ctx }).flags.map((f) => [f.key, f.value]))
  assert.deepEqual(values({ personProperties: { plan: 'pro' }, groups: { company: 'c' }, groupProperties: { company: { plan: 'free' } } }), {
    'person-a': true, 'person-b': true, group: false, 'other-value': false, 'cohort-in': true, 'cohort-not-in': false,
  })
  assert.deepEqual(values({ personProperties: { plan: 'free' }, groups: { company: 'c' }, groupProperties: { company: { plan: 'pro' } } }), {
    'person-a': false, 'person-b': false, group: true, 'other-value': true, 'cohort-in': false, 'cohort-not-in': true,
  })
})
