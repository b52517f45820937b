// The flag catalogue and population of the posthog-node oracle test: every operator, rollouts from 0
// to 100, multivariate splits with and without variant overrides, payloads, group, cohort and
// dependency flags. Variant-override conditions are stored first, where PostHog's server and
// posthog-node walk conditions identically (see spec/NOTES.md).

type Json = Record<string, unknown>
const person = (key: string, operator: string, value: unknown) => ({ key, operator, value, type: 'person' })
const cond = (properties: Json[], rollout_percentage: number | null = 100, variant?: string) => ({
  properties,
  rollout_percentage,
  ...(variant ? { variant } : {}),
})
const variants3 = { variants: [{ key: 'control', rollout_percentage: 34 }, { key: 'test', rollout_percentage: 33 }, { key: 'other', rollout_percentage: 33 }] }

/** Flags keyed by name; `$cohort`/`$static`/`$dep:<key>` placeholders are replaced with ids at creation. */
export function oracleFlags(): Json[] {
  const flags: Json[] = []
  const add = (key: string, filters: Json, extra: Json = {}) => flags.push({ key, filters, ...extra })
  for (const r of [0, 1, 10, 25, 33, 50, 75, 99, 100]) add(`rollout-${r}`, { groups: [cond([], r)] })
  add('rollout-null', { groups: [cond([], null)] })
  const ops: Array<[string, Json]> = [
    ['exact-string', person('country', 'exact', 'DE')],
    ['exact-list', person('country', 'exact', ['US', 'gb', 'Fr'])],
    ['exact-bool', person('is_beta', 'exact', ['true'])],
    ['is-not', person('plan', 'is_not', ['free'])],
    ['is-set', person('company_size', 'is_set', 'is_set')],
    ['is-not-set', person('company_size', 'is_not_set', 'is_not_set')],
    ['icontains', person('email', 'icontains', 'EXAMPLE.com')],
    ['not-icontains', person('email', 'not_icontains', 'gmail')],
    ['regex', person('email', 'regex', '^[a-m].*@posthog\\.com$')],
    ['not-regex', person('browser', 'not_regex', 'Chrom(e|ium)')],
    ['gt', person('age', 'gt', '30')],
    ['gte', person('age', 'gte', '40')],
    ['lt', person('age', 'lt', '25')],
    ['lte', person('age', 'lte', '50')],
    ['date-before', person('signup_date', 'is_date_before', '2024-06-01')],
    ['date-after-relative', person('signup_date', 'is_date_after', '-400d')],
    ['semver-eq', person('app_version', 'semver_eq', '1.2.3')],
    ['semver-neq', person('app_version', 'semver_neq', '1.2.3')],
    ['semver-gt', person('app_version', 'semver_gt', '1.5.0')],
    ['semver-gte', person('app_version', 'semver_gte', '2.0.0')],
    ['semver-lt', person('app_version', 'semver_lt', '1.0.0')],
    ['semver-lte', person('app_version', 'semver_lte', '1.2.3')],
    ['semver-tilde', person('app_version', 'semver_tilde', '1.2.0')],
    ['semver-caret', person('app_version', 'semver_caret', '1.0.0')],
    ['semver-wildcard', person('app_version', 'semver_wildcard', '2.*')],
  ]
  for (const [key, filter] of ops) add(`op-${key}`, { groups: [cond([filter], key.startsWith('semver') ? 100 : 60)] })
  add('multi-condition', {
    groups: [cond([person('country', 'exact', 'US'), person('age', 'gt', '20')], 50), cond([person('plan', 'exact', 'enterprise')], 100)],
  })
  add('mv-plain', { groups: [cond([], 100)], multivariate: variants3 })
  add('mv-uneven', { groups: [cond([], 80)], multivariate: { variants: [{ key: 'a', rollout_percentage: 10 }, { key: 'b', rollout_percentage: 90 }] } })
  add('mv-override', {
    groups: [cond([person('plan', 'exact', 'pro')], 100, 'test'), cond([person('country', 'exact', 'DE')], 100, 'other'), cond([], 50)],
    multivariate: variants3,
  })
  add('mv-payloads', {
    groups: [cond([person('is_beta', 'exact', ['true'])], 100, 'control'), cond([], 70)],
    multivariate: variants3,
    payloads: { control: '{"color": "blue"}', test: '"plain string"', other: '[1, 2, 3]' },
  })
  add('bool-payload', { groups: [cond([], 40)], payloads: { true: '{"discount": 10}' } })
  add('cohort-dynamic', { groups: [cond([{ key: 'id', type: 'cohort', value: '$cohort' }], 100)] })
  add('cohort-dynamic-rollout', { groups: [cond([{ key: 'id', type: 'cohort', value: '$cohort' }], 45)], multivariate: variants3 })
  add('cohort-not-in', { groups: [cond([{ key: 'id', type: 'cohort', operator: 'not_in', value: '$cohort' }], 100)] })
  add('cohort-static', { groups: [cond([{ key: 'id', type: 'cohort', value: '$static' }], 100)] })
  const group = (key: string, operator: string, value: unknown) => ({ key, operator, value, type: 'group', group_type_index: 0 })
  add('group-company-plan', { aggregation_group_type_index: 0, groups: [cond([group('tier', 'exact', ['gold', 'silver'])], 100)] })
  add('group-company-rollout', { aggregation_group_type_index: 0, groups: [cond([], 50)] })
  add('group-company-mv', { aggregation_group_type_index: 0, groups: [cond([group('employees', 'gt', '100')], 70)], multivariate: variants3 })
  add('group-team-rollout', { aggregation_group_type_index: 1, groups: [cond([], 30)] })
  add('depends-on-rollout-50', { groups: [cond([{ key: '$dep:rollout-50', type: 'flag', operator: 'flag_evaluates_to', value: true }], 100)] })
  add('inactive', { groups: [cond([], 100)] }, { active: false })
  add('continuity', { groups: [cond([], 50)] }, { ensure_experience_continuity: true })
  return flags
}

/** A small deterministic PRNG, so a failure can be reproduced. */
export function prng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface OracleUser {
  distinctId: string
  personProperties: Json
  groups: Record<string, string>
  groupProperties: Record<string, Json>
}

export function oracleUsers(count: number, seed = 42): OracleUser[] {
  const rand = prng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]
  const users: OracleUser[] = []
  for (let i = 0; i < count; i++) {
    const props: Json = {
      email: `${pick(['anna', 'bob', 'zed', 'mia', 'nick'])}${i}@${pick(['posthog.com', 'example.com', 'gmail.com', 'EXAMPLE.COM'])}`,
      country: pick(['US', 'DE', 'FR', 'GB', 'gb', 'JP']),
      plan: pick(['free', 'pro', 'enterprise']),
      is_beta: pick([true, false, 'true', 'false']),
      browser: pick(['Chrome', 'Firefox', 'Safari', 'Chromium']),
      age: Math.floor(rand() * 60) + 15,
      signup_date: new Date(Date.UTC(2022, 0, 1) + Math.floor(rand() * 1200) * 86_400_000 + 43_200_000).toISOString(),
      app_version: pick(['0.9.12', '1.0.0', '1.2.3', '1.2.9', '1.5.0', '1.10.2', '2.0.0', '2.3.1', 'v3.0.0']),
    }
    if (rand() < 0.5) props.company_size = pick(['1-10', '11-50', '500+'])
    const groups: Record<string, string> = {}
    const groupProperties: Record<string, Json> = {}
    if (rand() < 0.6) {
      groups.company = `company-${Math.floor(rand() * 300)}`
      groupProperties.company = { tier: pick(['gold', 'silver', 'bronze']), employees: Math.floor(rand() * 400) }
    }
    if (rand() < 0.4) {
      groups.team = `team-${Math.floor(rand() * 50)}`
      groupProperties.team = {}
    }
    users.push({ distinctId: `user-${i}-${Math.floor(rand() * 1e9).toString(36)}`, personProperties: props, groups, groupProperties })
  }
  return users
}
