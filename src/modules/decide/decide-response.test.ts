import assert from 'node:assert/strict'
import test from 'node:test'
import type { FlagEvaluation } from '../../domain/flags/flag-types.ts'
import { decideBody, flagsBody, remoteConfigFields, remoteConfigMembers } from './decide-response.ts'

function anEvaluation(over: Partial<FlagEvaluation> = {}): FlagEvaluation {
  return {
    key: 'on',
    enabled: true,
    variant: null,
    value: true,
    payload: null,
    reason: { code: 'condition_match', conditionIndex: 0, description: 'Matched condition set 1' },
    flagId: 1,
    version: 3,
    errored: false,
    ...over,
  }
}

const on = anEvaluation({ payload: '{"a":1}' })
const variant = anEvaluation({ key: 'mv "quoted"', variant: 'test', value: 'test', payload: { x: [1, 2] }, flagId: 2 })
const off = anEvaluation({
  key: 'off',
  enabled: false,
  value: false,
  reason: { code: 'out_of_rollout_bound', conditionIndex: 1, description: 'Out of rollout bound' },
  flagId: 3,
  version: null,
})
const broken = anEvaluation({
  key: 'broken',
  enabled: false,
  value: false,
  reason: { code: 'missing_dependency', conditionIndex: null, description: 'Flag cannot be evaluated due to missing dependency' },
  flagId: 4,
  errored: true,
})
const result = { flags: [on, variant, off, broken], errors: true }

const detail = (f: FlagEvaluation, payload: string | null) => ({
  key: f.key,
  enabled: f.enabled,
  variant: f.variant,
  reason: { code: f.reason.code, condition_index: f.reason.conditionIndex, description: f.reason.description },
  metadata: { id: f.flagId, version: f.version, description: null, payload },
  ...(f.errored ? { failed: true } : {}),
})
const payloads = { on: '{"a":1}', 'mv "quoted"': { x: [1, 2] } }

test('decide bodies carry the flag fields of each version after the remote config', () => {
  const config = remoteConfigFields(true)
  const parse = (v: number) => JSON.parse(decideBody(v, result, remoteConfigMembers(true), 'r1').toString())
  assert.deepEqual(parse(1), { ...config, featureFlags: ['on', 'mv "quoted"'], requestId: 'r1' })
  assert.deepEqual(parse(2), { ...config, featureFlags: { on: true, 'mv "quoted"': 'test' }, requestId: 'r1' })
  const errors = { errorsWhileComputingFlags: true, errorComputingFlags: true }
  assert.deepEqual(parse(3), {
    ...config,
    featureFlags: { on: true, 'mv "quoted"': 'test', off: false, broken: false },
    featureFlagPayloads: payloads,
    ...errors,
    requestId: 'r1',
  })
  assert.deepEqual(parse(4), {
    ...config,
    flags: {
      on: detail(on, '{"a":1}'),
      'mv "quoted"': detail(variant, '{"x":[1,2]}'),
      off: detail(off, null),
      broken: detail(broken, null),
    },
    ...errors,
    requestId: 'r1',
  })
})

test('flags bodies carry the detailed map from v2 and the legacy map before, config only when asked', () => {
  const v2 = JSON.parse(flagsBody(2, result, remoteConfigMembers(null), 'r2', 123).toString())
  assert.deepEqual(v2, {
    errorsWhileComputingFlags: true,
    flags: { on: detail(on, '{"a":1}'), 'mv "quoted"': detail(variant, '{"x":[1,2]}'), off: detail(off, null), broken: detail(broken, null) },
    featureFlagPayloads: payloads,
    requestId: 'r2',
    evaluatedAt: 123,
  })
  const v1 = JSON.parse(flagsBody(1, { flags: [off], errors: false }, remoteConfigMembers(false), 'r3', 5).toString())
  assert.deepEqual(v1, {
    ...remoteConfigFields(false),
    errorsWhileComputingFlags: false,
    featureFlags: { off: false },
    featureFlagPayloads: {},
    requestId: 'r3',
    evaluatedAt: 5,
  })
})

test('an answer without flags is valid JSON with empty maps', () => {
  const empty = { flags: [], errors: false }
  assert.deepEqual(JSON.parse(decideBody(1, empty, remoteConfigMembers(null), 'r').toString()), { featureFlags: [], requestId: 'r' })
  assert.deepEqual(JSON.parse(flagsBody(2, empty, remoteConfigMembers(null), 'r', 1).toString()), {
    errorsWhileComputingFlags: false,
    flags: {},
    featureFlagPayloads: {},
    requestId: 'r',
    evaluatedAt: 1,
  })
})

test('non-ASCII keys and payloads are encoded as UTF-8', () => {
  const umlaut = anEvaluation({ key: 'über-flag', payload: '{"emoji":"🎉"}' })
  const body = flagsBody(2, { flags: [umlaut], errors: false }, remoteConfigMembers(null), 'r', 1)
  const parsed = JSON.parse(body.toString('utf8'))
  assert.equal(parsed.flags['über-flag'].metadata.payload, '{"emoji":"🎉"}')
  assert.deepEqual(parsed.featureFlagPayloads, { 'über-flag': '{"emoji":"🎉"}' })
})
