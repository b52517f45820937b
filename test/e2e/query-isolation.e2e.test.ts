import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { testOnEachEngine, type Engine } from '../helpers/engines.ts'
import { PostHog } from 'posthog-node'
import { captureEvents, waitForStored, type TestEvent } from '../helpers/query-data.ts'
import { eventually } from '../helpers/eventually.ts'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'

// A member saturates the query API with cartesian joins while an SDK captures and evaluates flags.
// The joins never finish by themselves (8e9 rows per join level over 2,000 events): they run until
// the test cancels them by closing their connections.
const SEED = 2000
// ClickHouse 18.16 joins on equalities only, one JOIN per SELECT: there every seeded event shares its
// name, and the second join sits in an outer SELECT; the same 8e9 rows.
const HEAVY: Record<Engine, string> = {
  duckdb: 'SELECT count() FROM events a JOIN events b ON a.distinct_id != b.distinct_id JOIN events c ON b.distinct_id != c.distinct_id',
  clickhouse: 'SELECT count() FROM (SELECT a.event AS e FROM events a JOIN events b ON a.event = b.event) AS x JOIN events c ON x.e = c.event',
}
/** The bound: each /batch/ the SDK sends is acknowledged within this (the only time asserted). */
const ACK_BOUND_MS = 1000

const seedEvents: TestEvent[] = Array.from({ length: SEED }, (_, i) => ({
  event: 'seed',
  distinct_id: `seed-${i % 50}`,
  timestamp: new Date(Date.UTC(2024, 5, 1) + i * 60_000).toISOString(),
  properties: { i },
}))

async function memberOf(app: TestApp, email: string): Promise<Record<string, string>> {
  const { key } = await app.services.projects.createUser({ email, firstName: 'Member', projectIds: [app.projectId] })
  return { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
}

/** Starts a HogQL query over real HTTP; the controller cancels it (the server interrupts the statement). */
function startQuery(host: string, app: TestApp, headers: Record<string, string>, query: string, cancel: AbortController) {
  return fetch(`${host}/api/projects/${app.projectId}/query/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query: { kind: 'HogQLQuery', query } }),
    signal: cancel.signal,
  }).then(
    async (res) => ({ status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> }),
    () => ({ status: 0, retryAfter: null, body: {} as Record<string, unknown> }),
  )
}

/** posthog-node against the server, recording the status of each /batch/ it sends. */
function sdkClient(app: TestApp, host: string) {
  const batches: number[] = []
  const client = new PostHog(app.projectKey, {
    host,
    flushAt: 1000,
    flushInterval: 0,
    fetchRetryCount: 0,
    requestTimeout: 30_000,
    featureFlagsRequestTimeoutMs: 30_000,
    fetch: async (url, options) => {
      const res = await fetch(url, options as RequestInit)
      if (new URL(url).pathname.startsWith('/batch')) batches.push(res.status)
      return res
    },
  })
  return { client, batches }
}

const json = { 'content-type': 'application/json' }

/**
 * A seeded app on real HTTP, with a member's `heavy` cartesian joins in flight: resolves once those
 * the limits admit are computing (the others have been answered 429).
 */
async function saturated(t: TestContext, engine: Engine, env: Record<string, string>, running: number) {
  const app = await buildTestApp(t, { engine, env: { TALLY_QUERY_TIMEOUT_MS: '120000', ...env } })
  await captureEvents(app, seedEvents)
  const host = await app.http.listen({ host: '127.0.0.1', port: 0 })
  const member = await memberOf(app, 'heavy@example.com')
  const cancel = new AbortController()
  t.after(() => cancel.abort())
  const heavy = Array.from({ length: 4 }, () => startQuery(host, app, member, HEAVY[engine], cancel))
  await eventually(async () => app.services.queries.running() >= running)
  const owner = () => startQuery(host, app, { ...app.auth, ...json }, 'SELECT count() FROM events', new AbortController())
  /** An insight's refresh (force_blocking: computed now) as the owner or the member. */
  const refreshInsight = (id: number, as: 'owner' | 'member') =>
    app.http.inject({ method: 'GET', url: `/api/projects/${app.projectId}/insights/${id}/?refresh=force_blocking`, headers: as === 'owner' ? app.auth : member })
  /** Cancels the member's queries; their answers (0: cancelled). */
  const stop = async () => {
    cancel.abort()
    return Promise.all(heavy)
  }
  return { app, host, owner, refreshInsight, stop }
}

testOnEachEngine('a member running four heavy queries: posthog-node captures are acknowledged within 1 s, flags answer, /_ready stays 200, the owner is answered', async (t, engine) => {
  // All four of the member's queries are admitted: what is tested is where they compute.
  const limits = { TALLY_QUERY_CONCURRENCY: '5', TALLY_QUERY_CONCURRENCY_PER_PROJECT: '5', TALLY_QUERY_CONCURRENCY_PER_USER: '4' }
  const { app, host, owner, stop } = await saturated(t, engine, limits, 4)
  const flag = await app.http.inject({
    method: 'POST',
    url: `/api/projects/${app.projectId}/feature_flags/`,
    headers: app.auth,
    payload: { key: 'beta', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
  })
  assert.equal(flag.statusCode, 201, flag.body)

  const { client, batches } = sdkClient(app, host)
  const acks: number[] = []
  const ready: number[] = []
  const flags: unknown[] = []
  const rounds = 12
  const perRound = 25
  let ownerAnswer: Awaited<ReturnType<typeof owner>> | null = null
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < perRound; i++) client.capture({ distinctId: `sdk-${i % 5}`, event: 'sdk_event', properties: { round, i } })
    // From the SDK's side: its gzip, the request, the durable write, the answer.
    const started = performance.now()
    await client.flush()
    acks.push(performance.now() - started)
    flags.push((await client.evaluateFlags(`sdk-${round}`)).getFlag('beta', { sendFeatureFlagEvents: false }))
    ready.push((await fetch(`${host}/_ready`)).status)
    if (round === rounds / 2) ownerAnswer = await owner()
  }
  await client.shutdown()
  const member = await stop()

  assert.deepEqual(member.map((r) => r.status), [0, 0, 0, 0], 'the member\'s queries ran until cancelled')
  assert.deepEqual(batches, Array(rounds).fill(200), 'one /batch/ per flush, each accepted')
  for (const [i, ms] of acks.entries()) assert.ok(ms < ACK_BOUND_MS, `flush ${i} was acknowledged after ${Math.round(ms)} ms`)
  assert.deepEqual(ready, Array(rounds).fill(200), 'readiness while the member queries')
  assert.deepEqual(flags, Array(rounds).fill(true), 'the flag evaluated through /flags')
  assert.equal(ownerAnswer?.status, 200, JSON.stringify(ownerAnswer?.body))
  assert.ok(Number((ownerAnswer!.body.results as number[][])[0]![0]) >= SEED, 'the owner counts at least the seeded events')
  // Nothing acknowledged is lost: every captured event is stored.
  await waitForStored(app, SEED + rounds * perRound)
})

testOnEachEngine('a member running four heavy queries holds two slots: the other two and their insight refreshes are refused 429 with Retry-After, the owner is answered', async (t, engine) => {
  const { app, owner, refreshInsight, stop } = await saturated(t, engine, {}, 2)
  const trends = { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'seed' }], dateRange: { date_from: '2024-06-01', date_to: '2024-06-03' } } }
  const insight = await app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/insights/`, headers: app.auth, payload: { name: 'Seeds', query: trends } })
  assert.equal(insight.statusCode, 201, insight.body)
  const memberRefresh = await refreshInsight(insight.json().id, 'member')
  const ownerRefresh = await refreshInsight(insight.json().id, 'owner')
  const ownerAnswer = await owner()
  const member = await stop()
  assert.equal(memberRefresh.statusCode, 429, memberRefresh.body)
  assert.equal(memberRefresh.headers['retry-after'], '1')
  assert.equal(ownerRefresh.statusCode, 200, ownerRefresh.body)
  assert.ok((ownerRefresh.json().result as Array<{ count: number }>)[0]!.count > 0, 'the owner\'s insight counts the seeded events')
  assert.equal(ownerAnswer.status, 200, JSON.stringify(ownerAnswer.body))
  assert.ok(Number((ownerAnswer.body.results as number[][])[0]![0]) >= SEED)
  const refused = member.filter((r) => r.status === 429)
  assert.equal(refused.length, 2, `the member's answers: ${member.map((r) => r.status).join(', ')}`)
  for (const r of refused) {
    assert.equal(r.retryAfter, '1')
    assert.deepEqual(r.body, { type: 'throttled_error', code: 'throttled', detail: 'Too many queries are running for this user (2 at most): try again shortly.', attr: null })
  }
})

testOnEachEngine('the query API limits each user to TALLY_QUERY_RATE_PER_USER queries a minute: 429 with Retry-After, other users unaffected', async (t, engine) => {
  const app = await buildTestApp(t, { engine, env: { TALLY_QUERY_RATE_PER_USER: '3' } })
  const member = await memberOf(app, 'rate@example.com')
  const ask = (headers: Record<string, string>) =>
    app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/query/`, headers, payload: { query: { kind: 'HogQLQuery', query: 'SELECT 1' } } })
  for (let i = 0; i < 3; i++) assert.equal((await ask(member)).statusCode, 200, `query ${i + 1}`)
  const fourth = await ask(member)
  assert.equal(fourth.statusCode, 429, fourth.body)
  // Three a minute: the next one comes back within 20 s of the third.
  const wait = Number(fourth.headers['retry-after'])
  assert.ok(wait >= 1 && wait <= 20, `Retry-After ${wait}`)
  assert.deepEqual(fourth.json(), { type: 'throttled_error', code: 'throttled', detail: `Request was throttled. Expected available in ${wait} seconds.`, attr: null })
  assert.equal((await ask(app.auth)).statusCode, 200, 'the owner has a rate of their own')
})
