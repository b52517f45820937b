import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'

async function flag(app: TestApp, body: object) {
  const res = await app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/feature_flags/`, headers: app.auth, payload: body })
  assert.equal(res.statusCode, 201, res.body)
}
const decide = (app: TestApp, distinctId: string) =>
  app.http.inject({ method: 'POST', url: '/flags/?v=2', payload: { token: app.projectKey, distinct_id: distinctId } })
const proOnly = {
  key: 'pro-only',
  filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }], rollout_percentage: 100 }] },
}

/** Tally started again on the data dir of `first` (whose keys stay the valid ones). */
async function restart(t: Parameters<typeof buildTestApp>[0], first: TestApp, env: Record<string, string> = {}): Promise<TestApp> {
  const again = await buildTestApp(t, { dataDir: first.dataDir, env })
  return { ...again, projectKey: first.projectKey, auth: first.auth }
}

/** Counts the store reads /decide makes through the person cache (same object the service holds). */
function countReads(app: TestApp) {
  const counts = { persons: 0, overrides: 0 }
  const data = app.services.personData
  const getPersons = data.getPersons
  const getHashKeyOverrides = data.getHashKeyOverrides
  data.getPersons = (...args) => (counts.persons++, getPersons(...args))
  data.getHashKeyOverrides = (...args) => (counts.overrides++, getHashKeyOverrides(...args))
  return counts
}

test('decide person cache: a restarted server warms the cache in the background and answers from it', async (t) => {
  const first = await buildTestApp(t)
  await flag(first, proOnly)
  const persons = Array.from({ length: 1200 }, (_, i) => ({ distinctId: `p${i}`, properties: { plan: i % 2 ? 'pro' : 'free' } }))
  await first.services.personData.upsertPersons(first.projectId, persons)
  await first.close()

  const again = await restart(t, first)
  assert.equal((await again.personCacheWarmUp).entries, 1200)
  const reads = countReads(again)
  assert.equal((await decide(again, 'p1')).json().flags['pro-only'].enabled, true)
  assert.equal((await decide(again, 'p2')).json().flags['pro-only'].enabled, false)
  assert.deepEqual(reads, { persons: 0, overrides: 0 })
  assert.deepEqual(again.services.personData.stats(), { hits: 2, misses: 0, warmed: 1200, entries: 1200 })
})

test('decide person cache: with TALLY_PERSON_CACHE_WARM=false persons are read on first use, then cached', async (t) => {
  const first = await buildTestApp(t)
  await flag(first, proOnly)
  await first.services.personData.upsertPersons(first.projectId, [{ distinctId: 'p1', properties: { plan: 'pro' } }])
  await first.close()

  const again = await restart(t, first, { TALLY_PERSON_CACHE_WARM: 'false' })
  assert.equal((await again.personCacheWarmUp).entries, 0)
  const reads = countReads(again)
  assert.equal((await decide(again, 'p1')).json().flags['pro-only'].enabled, true)
  assert.equal((await decide(again, 'p1')).json().flags['pro-only'].enabled, true)
  assert.equal(reads.persons, 1)
})

test('decide person cache: a write after warm-up is seen by the next answer', async (t) => {
  const first = await buildTestApp(t)
  await flag(first, proOnly)
  await first.services.personData.upsertPersons(first.projectId, [{ distinctId: 'p1', properties: { plan: 'free' } }])
  await first.close()

  const again = await restart(t, first)
  await again.personCacheWarmUp
  assert.equal((await decide(again, 'p1')).json().flags['pro-only'].enabled, false)
  await again.services.personData.upsertPersons(again.projectId, [{ distinctId: 'p1', properties: { plan: 'pro' } }])
  assert.equal((await decide(again, 'p1')).json().flags['pro-only'].enabled, true)
})

test('decide person cache: without a continuity flag no hash key override is read, with one it is', async (t) => {
  const app = await buildTestApp(t)
  await flag(app, proOnly)
  const reads = countReads(app)
  await decide(app, 'anyone')
  assert.equal(reads.overrides, 0)
  await flag(app, { key: 'sticky', ensure_experience_continuity: true, filters: { groups: [{ properties: [], rollout_percentage: 50 }] } })
  await decide(app, 'anyone')
  assert.equal(reads.overrides, 1)
})
