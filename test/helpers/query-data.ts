import assert from 'node:assert/strict'
import { after, before, type TestContext } from 'node:test'
import { buildTestApp, type TestApp } from './test-app.ts'
import { ENGINES, type Engine } from './engines.ts'
import { skipWithoutClickHouse } from './clickhouse.ts'

export interface TestEvent {
  event: string
  distinct_id: string
  timestamp: string
  properties?: Record<string, unknown>
}

/** Sends events through real capture (batches of 500) and waits until the pipeline has stored them all (`alreadyStored` + these). */
export async function captureEvents(app: TestApp, events: readonly TestEvent[], alreadyStored = 0): Promise<void> {
  for (let i = 0; i < events.length; i += 500) {
    const batch = events.slice(i, i + 500).map((e) => ({ ...e, uuid: crypto.randomUUID(), properties: e.properties ?? {} }))
    const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
    assert.equal(res.statusCode, 200, res.body)
  }
  await waitForStored(app, alreadyStored + events.length)
}

/**
 * Polls the query API (an EventsQuery `count()`) until the project holds `count` events. On
 * ClickHouse, then until no INSERT into `events` is running: 18.16 makes an insert's rows readable
 * before its materialized views (the sessions aggregate) have written theirs, so a count that is
 * reached says nothing yet of the sessions.
 */
export async function waitForStored(app: TestApp, count: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const res = await postQuery(app, { kind: 'EventsQuery', select: ['count()'] })
    assert.equal(res.statusCode, 200, res.body)
    if ((res.json().results[0]?.[0] ?? 0) >= count) {
      if (app.config.storage.clickhouseUrl) await clickHouseInsertsDone(app.config.storage.clickhouseUrl)
      return
    }
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`fewer than ${count} events were stored`)
}

/**
 * Until the app's ClickHouse server runs no INSERT into an `events` table (of any database: a
 * shared server's other test files insert too, each in a moment). Gives up quietly after 30 s.
 */
async function clickHouseInsertsDone(urls: string): Promise<void> {
  const u = new URL(urls.split(',')[0]!.trim())
  const headers: Record<string, string> = u.username ? { authorization: `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}` } : {}
  const sql = `SELECT count() FROM system.processes WHERE query LIKE 'INSERT INTO events %'`
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    const res = await fetch(`${u.protocol}//${u.host}/`, { method: 'POST', body: sql, headers })
    if (res.ok && (await res.text()).trim() === '0') return
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** `POST /query/` as the bootstrap user. */
export async function postQuery(app: TestApp, query: unknown, extra: Record<string, unknown> = {}) {
  return app.http.inject({ method: 'POST', url: `/api/projects/${app.projectId}/query/`, headers: app.auth, payload: { query, ...extra } })
}

/** `POST /query/` that must answer 200; its body. */
export async function queryOk(app: TestApp, query: unknown): Promise<Record<string, any>> {
  const res = await postQuery(app, query)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/** A seeded pseudo-random generator (mulberry32): the same data set on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * A `FunnelsQuery` of one event per step over `dateRange`, with a 2-day window unless `filter`
 * says otherwise; `extra` adds or overrides top-level fields.
 */
export function funnelQuery(steps: readonly string[], dateRange: Record<string, unknown>, extra: Record<string, unknown> = {}, filter: Record<string, unknown> = {}) {
  return {
    kind: 'FunnelsQuery',
    series: steps.map((event) => ({ kind: 'EventsNode', event })),
    dateRange,
    funnelsFilter: { funnelWindowInterval: 2, funnelWindowIntervalUnit: 'day', ...filter },
    ...extra,
  }
}

/**
 * One app for a whole test file (loading the data is the slow part): built and seeded with `events`
 * (through real capture) before the file's first test, closed after its last. Read `.app` in tests.
 */
export function seededApp(events: readonly TestEvent[]): { readonly app: TestApp } {
  let app: TestApp | undefined
  const cleanups: Array<() => Promise<void>> = []
  before(async () => {
    app = await buildTestApp({ after: (fn: () => Promise<void>) => cleanups.push(fn) } as unknown as TestContext, { env: { TALLY_LOG_LEVEL: 'silent' } })
    await captureEvents(app, events)
  })
  after(async () => {
    for (const fn of cleanups) await fn()
  })
  return {
    get app(): TestApp {
      assert.ok(app, 'the seeded app is built before the first test')
      return app
    },
  }
}

/**
 * `seededApp` on each event engine (DuckDB, and ClickHouse where it runs): one app per engine for the
 * whole file, seeded with the same events; `app(engine)` in a `testOnEachEngine` body.
 */
export function seededApps(events: readonly TestEvent[], opts: { env?: Record<string, string> } = {}): { app(engine: Engine): TestApp } {
  const apps = new Map<Engine, TestApp>()
  const cleanups: Array<() => Promise<void>> = []
  before(async () => {
    for (const engine of ENGINES) {
      if (engine === 'clickhouse' && skipWithoutClickHouse()) continue
      const app = await buildTestApp({ after: (fn: () => Promise<void>) => cleanups.push(fn) } as unknown as TestContext, { engine, env: { TALLY_LOG_LEVEL: 'silent', ...opts.env } })
      await captureEvents(app, events)
      apps.set(engine, app)
    }
  })
  after(async () => {
    for (const fn of cleanups) await fn()
  })
  return {
    app(engine: Engine): TestApp {
      const app = apps.get(engine)
      assert.ok(app, `the seeded ${engine} app is built before the first test`)
      return app
    },
  }
}
