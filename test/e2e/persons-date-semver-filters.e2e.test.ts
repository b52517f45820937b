import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { privateApi } from '../helpers/private-api.ts'
import { createTestDatabase, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'

// `GET /persons/?properties=...` with `is_date_*` and `semver_*` filters, on the embedded PGlite
// metadata store and (with TEST_POSTGRES_URL) on PostgreSQL. The expected persons are written out
// by hand from the seeded values.
const PERSONS: Record<string, Record<string, unknown>> = {
  p1: { signed_up: '2024-01-15', app: '1.2.3' },
  p2: { signed_up: '2024-03-01T12:00:00Z', app: '1.10.0' },
  p3: { signed_up: 1709337600, app: 'v1.2.0-beta' }, // 2024-03-02 as Unix seconds
  p4: { signed_up: '2024-03-01T01:00:00+02:00', app: '0.9' }, // 2024-02-29T23:00Z
  p5: { signed_up: '2024-02-30', app: '2' }, // no such day
  p6: { signed_up: 'later', app: 'latest' },
  p7: { seen: 'yes' },
}

async function seeded(t: TestContext, env: Record<string, string> = {}): Promise<TestApp> {
  const app = await buildTestApp(t, { env })
  const batch = Object.entries(PERSONS).map(([id, props], i) => ({
    event: '$pageview', distinct_id: id, uuid: crypto.randomUUID(), timestamp: new Date(Date.UTC(2024, 5, 1) + i * 1000).toISOString(), properties: { $set: props },
  }))
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200, res.body)
  await waitForEvents(app, batch.length)
  return app
}

async function personsMatching(app: TestApp, filters: object[]): Promise<string[]> {
  const res = await privateApi(app).get(`/persons/?${new URLSearchParams({ properties: JSON.stringify(filters) })}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().results.flatMap((p: { distinct_ids: string[] }) => p.distinct_ids).sort()
}

async function checkDateAndVersionFilters(app: TestApp): Promise<void> {
  const date = (operator: string, value: unknown) => personsMatching(app, [{ key: 'signed_up', type: 'person', operator, value }])
  const version = (operator: string, value: unknown) => personsMatching(app, [{ key: 'app', type: 'person', operator, value }])
  assert.deepEqual(await date('is_date_after', '2024-03-01'), ['p2', 'p3'])
  assert.deepEqual(await date('is_date_before', '2024-03-01T00:00:00Z'), ['p1', 'p4'])
  assert.deepEqual(await date('is_date_exact', '2024-03-02'), ['p3'])
  assert.deepEqual(await date('is_date_after', '-1d'), [], 'every date is in the past')
  assert.deepEqual(await date('is_date_before', '-1d'), ['p1', 'p2', 'p3', 'p4'])
  assert.deepEqual(await version('semver_gte', '1.2.0'), ['p1', 'p2', 'p5'], 'numeric parts, and a pre-release sorts first')
  assert.deepEqual(await version('semver_lt', '1.2.0'), ['p3', 'p4'])
  assert.deepEqual(await version('semver_eq', '2.0'), ['p5'])
  assert.deepEqual(await version('semver_neq', '1.2.3'), ['p2', 'p3', 'p4', 'p5'], 'unparsable and missing values fail')
  assert.deepEqual(await version('semver_tilde', '1.2.0'), ['p1'])
  assert.deepEqual(await version('semver_caret', '1.2.0'), ['p1', 'p2'])
  assert.deepEqual(await version('semver_caret', '1.2.0-beta'), ['p1', 'p2', 'p3'], 'a pre-release of the bound itself is in range')
  assert.deepEqual(await version('semver_wildcard', '1.*'), ['p1', 'p2'])
  assert.deepEqual(await personsMatching(app, [
    { key: 'app', type: 'person', operator: 'semver_gte', value: '1.0.0' },
    { key: 'signed_up', type: 'person', operator: 'is_date_after', value: '2024-02-01' },
  ]), ['p2', 'p3'], 'p1 signed up too early, p4 runs 0.9, p5 has no date')
}

test('persons API filters by dates and versions on PGlite', async (t) => {
  await checkDateAndVersionFilters(await seeded(t))
})

test('persons API filters by dates and versions on PostgreSQL', { skip: !TEST_POSTGRES_URL }, async (t) => {
  await checkDateAndVersionFilters(await seeded(t, { TALLY_DATABASE_URL: await createTestDatabase(t) }))
})
