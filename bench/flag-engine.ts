// Flag evaluations per second of the pure engine (no I/O): 50 mixed flags, random users.
// Run: node --import tsx bench/flag-engine.ts
import { compileFlags } from '../src/domain/flags/compile-flags.ts'
import { evaluateFlags } from '../src/domain/flags/evaluate-flags.ts'
import type { FlagDefinition } from '../src/domain/flags/flag-types.ts'

const person = (key: string, value: unknown, operator = 'exact') => ({ key, value, operator, type: 'person' })

function mixedFlags(count: number): FlagDefinition[] {
  const shapes: ((i: number) => FlagDefinition['filters'])[] = [
    () => ({ groups: [{ properties: [], rollout_percentage: 30 }] }),
    () => ({ groups: [{ properties: [], rollout_percentage: 100 }] }),
    () => ({ groups: [{ properties: [person('email', '@acme.com', 'icontains')], rollout_percentage: 50 }] }),
    () => ({ groups: [{ properties: [person('plan', ['pro', 'enterprise'])] }, { properties: [person('country', 'DE')], rollout_percentage: 20 }] }),
    () => ({
      groups: [{ properties: [], rollout_percentage: 60 }],
      multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] },
      payloads: { a: '{"x":1}', b: '{"x":2}' },
    }),
    () => ({ groups: [{ properties: [person('age', '30', 'gt'), person('email', '^[a-m]', 'regex')] }] }),
    () => ({ groups: [{ properties: [person('app_version', '1.4.0', 'semver_gte')] }] }),
    () => ({ groups: [{ properties: [person('signup', '-30d', 'is_date_after')], rollout_percentage: 80 }] }),
    () => ({ groups: [{ properties: [{ key: 'id', value: 1, type: 'cohort' }] }] }),
    (i) => ({ groups: [{ properties: [{ key: `flag-${i - 1}`, value: true, operator: 'flag_evaluates_to', type: 'flag' }] }] }),
  ]
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1, key: `flag-${i}`, active: true, version: 1, filters: shapes[i % shapes.length](i),
  }))
}

const flags = mixedFlags(50)
const compiled = compileFlags(flags, {
  cohorts: [{ id: 1, filters: { properties: { type: 'OR', values: [person('country', 'DE'), person('email', '@vip', 'icontains')] } } }],
})

const now = Date.now()
const users = Array.from({ length: 10_000 }, (_, i) => ({
  distinctId: `user-${i}-${Math.random().toString(36).slice(2, 10)}`,
  personProperties: {
    email: `${['alice', 'bob', 'zed', 'mia'][i % 4]}@${['acme.com', 'vip.io', 'example.com'][i % 3]}`,
    plan: ['free', 'pro', 'enterprise'][i % 3],
    country: ['US', 'DE', 'FR'][i % 3],
    age: i % 60,
    app_version: ['1.3.9', '1.4.0', '2.0.1'][i % 3],
    signup: new Date(now - (i % 60) * 86_400_000).toISOString(),
  },
  now,
}))

function run(rounds: number): number {
  let enabled = 0
  for (let r = 0; r < rounds; r++) {
    const result = evaluateFlags(compiled, users[r % users.length])
    for (const f of result.flags) if (f.enabled) enabled++
  }
  return enabled
}

run(20_000) // warm-up
const rounds = 100_000
const start = process.hrtime.bigint()
const enabled = run(rounds)
const seconds = Number(process.hrtime.bigint() - start) / 1e9
const evaluations = rounds * flags.length
console.log(`${flags.length} flags x ${rounds} users: ${evaluations} evaluations in ${seconds.toFixed(2)} s`)
console.log(`${Math.round(evaluations / seconds).toLocaleString('en-US')} flag evaluations/s (${((enabled / evaluations) * 100).toFixed(1)} % enabled)`)
