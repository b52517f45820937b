import { test } from 'node:test'
import fc from 'fast-check'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { OPERATORS as ALL_OPERATORS } from '../../src/domain/properties/property-operators.ts'
import {
  assertHealthy, assertNo5xx, describe, fuzzSettings, hostileObject, hostileQueryValue, hostileScalar, hostileString, hostileValue,
  spliceDeep, wrongType,
} from './hostile.ts'

// The private write routes (dashboards, insights, actions, feature flags, cohorts: POST and PATCH) and
// their lists, with bodies whose every known field holds a plausible or hostile value: never a 5xx.

// Every operator of the table, and one it does not know.
const OPERATORS = [...ALL_OPERATORS, 'nope']
const TYPES = ['person', 'cohort', 'event', 'flag', 'group', 'element', 'behavioral', 'precalculated-cohort', 'static-cohort']

// Mostly plausible values, so that bodies get past the first field check and reach the services and
// stores; one field in several holds a wrong type or a hostile string.
const maybe = <T>(a: fc.Arbitrary<T>) => fc.oneof({ weight: 6, arbitrary: a }, { weight: 1, arbitrary: wrongType })
const bool = maybe(fc.boolean())
const flagKey = fc.oneof({ weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9_-]{1,12}$/) }, { weight: 1, arbitrary: hostileString })
const text = fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 12 }) }, { weight: 1, arbitrary: hostileString })
const id = fc.oneof(fc.constantFrom(1, 2, 0, -1, 2 ** 31, 999999999999, 1e20, '1', 'x'), fc.integer())

const property = fc.record(
  {
    key: maybe(fc.oneof(text, fc.constantFrom('email', '$browser', '1', 'id'))),
    value: fc.oneof(text, id, hostileValue, fc.array(text, { maxLength: 3 })),
    operator: maybe(fc.constantFrom(...OPERATORS)),
    type: maybe(fc.constantFrom(...TYPES)),
    group_type_index: maybe(id),
    negation: wrongType,
  },
  { requiredKeys: [] },
)
const properties = maybe(fc.array(property, { maxLength: 3 }))
const propertyGroup = fc.letrec((tie) => ({
  group: fc.record({ type: maybe(fc.constantFrom('AND', 'OR')), values: fc.array(fc.oneof(property, tie('group')), { maxLength: 3 }) }, { requiredKeys: [] }),
})).group

const flagFilters = maybe(
  fc.record(
    {
      groups: maybe(fc.array(fc.record({ properties, rollout_percentage: maybe(fc.oneof(fc.double(), id)), variant: maybe(text) }, { requiredKeys: [] }), { maxLength: 3 })),
      multivariate: maybe(fc.record({ variants: maybe(fc.array(fc.record({ key: maybe(text), rollout_percentage: maybe(hostileScalar) }, { requiredKeys: [] }), { maxLength: 3 })) }, { requiredKeys: [] })),
      payloads: maybe(fc.dictionary(hostileString, hostileValue, { maxKeys: 3 })),
      aggregation_group_type_index: maybe(id),
      super_groups: wrongType,
    },
    { requiredKeys: [] },
  ),
)

const BODIES: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  '/feature_flags/': fc.record(
    { key: maybe(flagKey), name: maybe(text), filters: flagFilters, active: bool, deleted: bool, tags: maybe(fc.array(text, { maxLength: 3 })), ensure_experience_continuity: bool, rollout_percentage: hostileScalar },
    { requiredKeys: [] },
  ),
  '/cohorts/': fc.record(
    {
      name: maybe(text), description: maybe(text), is_static: bool, deleted: bool,
      groups: maybe(fc.array(fc.record({ properties, action_id: id, days: hostileScalar }, { requiredKeys: [] }), { maxLength: 2 })),
      filters: maybe(fc.record({ properties: propertyGroup }, { requiredKeys: [] })),
      csv: maybe(text), distinct_ids: maybe(fc.array(text, { maxLength: 3 })),
    },
    { requiredKeys: [] },
  ),
  '/insights/': fc.record(
    { name: maybe(text), description: maybe(text), query: maybe(hostileObject), filters: maybe(hostileObject), dashboards: maybe(fc.array(id, { maxLength: 3 })), deleted: bool, favorited: bool },
    { requiredKeys: [] },
  ),
  '/dashboards/': fc.record(
    {
      name: maybe(text), description: maybe(text), pinned: bool, filters: maybe(hostileObject), tags: maybe(fc.array(text, { maxLength: 3 })),
      restriction_level: maybe(fc.constantFrom(21, 37, 0)), use_dashboard: maybe(id), use_template: maybe(text), duplicate_tiles: bool, delete_insights: bool,
      tiles: maybe(fc.array(fc.record({ id: maybe(id), layouts: maybe(hostileObject), color: maybe(text), text: maybe(fc.record({ body: maybe(text) })), deleted: bool }, { requiredKeys: [] }), { maxLength: 3 })),
      template: maybe(fc.record({ template_name: maybe(text), tiles: maybe(fc.array(hostileObject, { maxLength: 2 })), variables: wrongType, filters: wrongType }, { requiredKeys: [] })),
    },
    { requiredKeys: [] },
  ),
  '/actions/': fc.record(
    {
      name: maybe(text), description: maybe(text), tags: maybe(fc.array(text, { maxLength: 3 })), deleted: bool, post_to_slack: bool,
      steps: maybe(fc.array(fc.record({ event: maybe(text), url: maybe(text), url_matching: maybe(fc.constantFrom('exact', 'contains', 'regex')), selector: maybe(text), text: maybe(text), text_matching: maybe(fc.constantFrom('exact', 'contains', 'regex')), href: maybe(text), tag_name: maybe(text), properties }, { requiredKeys: [] }), { maxLength: 3 })),
    },
    { requiredKeys: [] },
  ),
}

/** Answers by method, resource and status, printed at the end: how much of the input got past validation. */
const STATS = new Map<string, number>()

async function call(app: TestApp, method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) {
  const res = await app.http.inject({
    method,
    url: `/api/projects/${app.projectId}${path}`,
    headers: { ...app.auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: spliceDeep(JSON.stringify(body)) }),
  })
  assertNo5xx(`${method} ${path} ${describe(body)}`, res)
  const key = `${method} ${path.split("/")[1]} ${res.statusCode}${res.statusCode === 400 && process.env.FUZZ_ATTRS ? ` ${res.json().attr}` : ""}`
  STATS.set(key, (STATS.get(key) ?? 0) + 1)
  return res
}

test('private write routes: hostile bodies for POST and PATCH never 5xx', async (t) => {
  const app = await buildTestApp(t)
  const settings = fuzzSettings('private-routes', 50)
  // One record of each kind to PATCH (and for ids in bodies to sometimes name).
  const existing: Record<string, number> = {}
  for (const [path, body] of Object.entries({ '/feature_flags/': { key: 'seed-flag' }, '/cohorts/': { name: 'seed', is_static: true }, '/insights/': { name: 'seed' }, '/dashboards/': { name: 'seed' }, '/actions/': { name: 'seed' } })) {
    existing[path] = (await call(app, 'POST', path, body)).json().id
  }
  for (const [path, arb] of Object.entries(BODIES)) {
    await fc.assert(
      fc.asyncProperty(arb, arb, hostileQueryValue, async (create, update, q) => {
        const created = await call(app, 'POST', path, create)
        const target = created.statusCode === 201 ? created.json().id : existing[path]
        await call(app, 'PATCH', `${path}${target}/`, update)
        await call(app, 'GET', `${path}${target}/`)
        await call(app, 'GET', `${path}?limit=${q}&offset=${q}&search=${q}`)
        await assertHealthy(app)
      }),
      settings,
    )
  }
  await assertHealthy(app)
  console.log(`# statuses: ${[...STATS].sort().map(([k, n]) => `${k}: ${n}`).join(', ')}`)
})
