import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { compileFlags } from './compile-flags.ts'
import { evaluateFlags } from './evaluate-flags.ts'
import { calculateHash } from './hash.ts'
import { matchProperty } from '../properties/match-property.ts'
import type { CohortDefinition, FlagDefinition, FlagEvaluationContext } from './flag-types.ts'
import type { PropertyFilter } from '../properties/property-filter.ts'

type GoldenCase<I, E> = [name: string, input: I & { source: string }, expected: E]

function loadGolden<I, E>(file: string): GoldenCase<I, E>[] {
  return JSON.parse(readFileSync(new URL(`../../../test/golden/${file}`, import.meta.url), 'utf8')) as GoldenCase<I, E>[]
}

interface HashInput {
  flag?: FlagDefinition
  distinctIdPrefix?: string
  count?: number
  prefix?: string
  identifier?: string
  salt?: string
}

for (const [name, input, expected] of loadGolden<HashInput, unknown>('flags-hash.json')) {
  test(`flags-hash: ${name}`, () => {
    if (input.flag) {
      const compiled = compileFlags([input.flag])
      const values = Array.from({ length: input.count ?? 0 }, (_, i) =>
        evaluateFlags(compiled, { distinctId: `${input.distinctIdPrefix}${i}`, now: 0 }).flags[0].value,
      )
      assert.deepEqual(values, expected)
    } else {
      assert.equal(calculateHash(input.prefix ?? '', input.identifier ?? '', input.salt ?? ''), expected)
    }
  })
}

interface PropertyInput {
  filter: PropertyFilter
  properties: Record<string, unknown>
  now?: string
}

for (const [name, input, expected] of loadGolden<PropertyInput, boolean>('properties-cases.json')) {
  test(`properties-cases: ${name}`, () => {
    const now = input.now ? Date.parse(input.now) : Date.parse('2024-01-01T00:00:00Z')
    assert.equal(matchProperty(input.filter, input.properties, now), expected)
  })
}

interface FlagsInput {
  flags: FlagDefinition[]
  cohorts?: CohortDefinition[]
  groupTypeMapping?: Record<string, string>
  context: Omit<FlagEvaluationContext, 'now'> & { now: string }
}

interface ExpectedFlag {
  absent?: boolean
  enabled?: boolean
  variant?: string | null
  code?: string
  conditionIndex?: number | null
  description?: string
  payload?: unknown
  errored?: boolean
}

interface FlagsExpected {
  errorsWhileComputingFlags?: boolean
  flags: Record<string, ExpectedFlag>
}

for (const [name, input, expected] of loadGolden<FlagsInput, FlagsExpected>('flags-cases.json')) {
  test(`flags-cases: ${name}`, () => {
    const compiled = compileFlags(input.flags, { cohorts: input.cohorts, groupTypeMapping: input.groupTypeMapping })
    const result = evaluateFlags(compiled, { ...input.context, now: Date.parse(input.context.now) })
    if (expected.errorsWhileComputingFlags !== undefined) {
      assert.equal(result.errorsWhileComputingFlags, expected.errorsWhileComputingFlags)
    }
    for (const [key, want] of Object.entries(expected.flags)) {
      const got = result.flags.find((f) => f.key === key)
      if (want.absent) {
        assert.equal(got, undefined, `${key} should be absent`)
        continue
      }
      assert.ok(got, `${key} missing from the result`)
      const actual: ExpectedFlag = {
        enabled: got.enabled,
        variant: got.variant,
        code: got.reason.code,
        conditionIndex: got.reason.conditionIndex,
      }
      if ('description' in want) actual.description = got.reason.description
      if ('payload' in want) actual.payload = got.payload
      if ('errored' in want) actual.errored = got.errored
      assert.deepEqual(actual, want, key)
    }
  })
}
