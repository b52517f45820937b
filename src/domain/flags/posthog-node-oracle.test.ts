import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PostHog } from 'posthog-node'
import { compileFlags } from './compile-flags.ts'
import { evaluateFlags } from './evaluate-flags.ts'
import type { FlagDefinition } from './flag-types.ts'

// Oracle: posthog-node 5.70's local evaluation (kept identical to PostHog's Rust flags service)
// must give the same value as Tally's engine for every user. The definitions avoid the cases
// where node defers to the server (integral numbers under `exact`, missing properties,
// non-numeric gt/lt), so that every flag resolves locally.

const person = (key: string, value: unknown, operator = 'exact') => ({ key, value, operator, type: 'person' })
const variants = (...pcts: number[]) => ({ variants: pcts.map((p, i) => ({ key: `v${i}`, rollout_percentage: p })) })

const COHORT = {
  type: 'OR',
  values: [
    { type: 'AND', values: [person('country', 'DE'), person('plan', 'pro')] },
    { type: 'AND', values: [person('email', '@vip', 'icontains')] },
  ],
}

const FLAGS: FlagDefinition[] = [
  { id: 1, key: 'rollout-30', active: true, filters: { groups: [{ properties: [], rollout_percentage: 30 }] } },
  { id: 2, key: 'email-icontains', active: true, filters: { groups: [{ properties: [person('email', '@ACME.com', 'icontains')], rollout_percentage: 80 }] } },
  {
    id: 3, key: 'mv', active: true,
    filters: {
      groups: [
        { properties: [person('plan', ['pro', 'enterprise'])], rollout_percentage: 100, variant: 'v1' },
        { properties: [], rollout_percentage: 60 },
      ],
      multivariate: variants(34, 33, 33),
    },
  },
  { id: 4, key: 'age-gt', active: true, filters: { groups: [{ properties: [person('age', '30', 'gt')] }] } },
  { id: 5, key: 'regex', active: true, filters: { groups: [{ properties: [person('email', '^[a-m][a-z]*@', 'regex')], rollout_percentage: 50 }] } },
  {
    id: 6, key: 'semver', active: true,
    filters: { groups: [{ properties: [person('app_version', '1.4.0', 'semver_gte')] }, { properties: [person('app_version', '0.9.*', 'semver_wildcard')] }] },
  },
  { id: 7, key: 'recent-signup', active: true, filters: { groups: [{ properties: [person('signup', '-30d', 'is_date_after')] }] } },
  { id: 8, key: 'cohort', active: true, filters: { groups: [{ properties: [{ key: 'id', value: 1, type: 'cohort' }], rollout_percentage: 70 }] } },
  {
    id: 9, key: 'depends-on-mv', active: true,
    filters: { groups: [{ properties: [{ key: 'mv', value: 'v1', operator: 'flag_evaluates_to', type: 'flag', dependency_chain: ['mv'] }] }] },
  },
  {
    id: 10, key: 'group-flag', active: true,
    filters: {
      aggregation_group_type_index: 0,
      groups: [{ properties: [{ key: 'size', value: '100', operator: 'gte', type: 'group', group_type_index: 0 }], rollout_percentage: 50 }],
    },
  },
  { id: 11, key: 'is-not', active: true, filters: { groups: [{ properties: [person('country', ['US', 'CA'], 'is_not')], rollout_percentage: 90 }] } },
  { id: 12, key: 'mv-full', active: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: variants(50, 30, 20) } },
  { id: 13, key: 'holdout', active: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }], holdout: { id: 5, exclusion_percentage: 20 }, multivariate: variants(50, 50) } },
  { id: 14, key: 'caret', active: true, filters: { groups: [{ properties: [person('app_version', '1.2.0', 'semver_caret')] }] } },
  { id: 15, key: 'not-regex', active: true, filters: { groups: [{ properties: [person('email', 'example\\.com$', 'not_regex')], rollout_percentage: 40 }] } },
  { id: 16, key: 'inactive', active: false, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
]

function mulberry32(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function randomUser(rand: () => number, i: number, now: number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]
  const name = pick(['alice', 'bob', 'zed', 'mia', 'Nora', 'x1'])
  const personProperties: Record<string, unknown> = {
    email: `${name}@${pick(['acme.com', 'ACME.com', 'vip.io', 'example.com'])}`,
    plan: pick(['free', 'pro', 'enterprise', 'Pro']),
    age: Math.floor(rand() * 50) + 10,
    country: pick(['US', 'CA', 'DE', 'FR', 'us']),
    app_version: pick(['1.3.9', '1.4.0', '1.10.2', '0.9.5', '2.0.0', 'v1.4.1', '1.2']),
    signup: new Date(now - Math.floor(rand() * 60) * 86_400_000 - 3_600_000).toISOString(),
  }
  const inCompany = rand() < 0.7
  const groups: Record<string, string> = inCompany ? { company: `company-${Math.floor(rand() * 500)}` } : {}
  const groupProperties: Record<string, Record<string, string>> = inCompany ? { company: { size: String(Math.floor(rand() * 200)) } } : {}
  return { distinctId: `user-${i}-${Math.floor(rand() * 1e9).toString(36)}`, personProperties, groups, groupProperties }
}

test('engine agrees with posthog-node 5.70 local evaluation for 3000 random users', async (t) => {
  const definitions = { flags: FLAGS, group_type_mapping: { '0': 'company' }, cohorts: { '1': COHORT } }
  const fakeFetch = async (url: string) => {
    const body = url.includes('/flags/definitions') || url.includes('local_evaluation') ? definitions : {}
    return { status: 200, headers: { get: () => null }, text: async () => JSON.stringify(body), json: async () => body }
  }
  const client = new PostHog('phc_oracle', {
    host: 'http://oracle.invalid',
    personalApiKey: 'phx_oracle',
    fetch: fakeFetch as never,
    featureFlagsPollingInterval: 3_600_000,
    flushAt: 10_000,
    disableGeoip: true,
  })
  t.after(() => client.shutdown())
  await client.reloadFeatureFlags()

  const compiled = compileFlags(FLAGS, { groupTypeMapping: { 0: 'company' }, cohorts: [{ id: 1, filters: { properties: COHORT } }] })
  const rand = mulberry32(20240601)
  const now = Date.now()
  const mismatches: string[] = []
  for (let i = 0; i < 3000; i++) {
    const user = randomUser(rand, i, now)
    const expected = await client.getAllFlags(user.distinctId, {
      personProperties: user.personProperties as Record<string, string>,
      groups: user.groups,
      groupProperties: user.groupProperties,
      onlyEvaluateLocally: true,
    })
    const ours = evaluateFlags(compiled, { ...user, now, includeInactive: true })
    for (const flag of ours.flags) {
      if (expected[flag.key] !== flag.value) {
        mismatches.push(`${flag.key} for ${JSON.stringify(user)}: node=${String(expected[flag.key])} tally=${String(flag.value)}`)
      }
    }
  }
  assert.deepEqual(mismatches.slice(0, 5), [])
})
