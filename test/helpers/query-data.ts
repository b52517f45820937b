import assert from 'node:assert/strict'
import type { TestApp } from './test-app.ts'
import { waitForEvents } from './capture-helpers.ts'

export interface TestEvent {
  event: string
  distinct_id: string
  timestamp: string
  properties?: Record<string, unknown>
}

/** Sends events through real capture (batches of 500) and waits until the pipeline has stored them all. */
export async function captureEvents(app: TestApp, events: readonly TestEvent[], alreadyStored = 0): Promise<void> {
  for (let i = 0; i < events.length; i += 500) {
    const batch = events.slice(i, i + 500).map((e) => ({ ...e, uuid: crypto.randomUUID(), properties: e.properties ?? {} }))
    const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
    assert.equal(res.statusCode, 200, res.body)
  }
  await waitForEvents(app, alreadyStored + events.length)
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
