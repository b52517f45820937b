import type { TestApp } from './test-app.ts'

export interface EventJson {
  id: string
  distinct_id: string
  event: string
  properties: Record<string, unknown>
  timestamp: string
  person: unknown
  elements: unknown[]
  elements_chain: string
}

/** Every event of the test project matching `query`, following `next` links, newest first. */
export async function readAllEvents(app: TestApp, query: Record<string, string> = {}): Promise<EventJson[]> {
  const out: EventJson[] = []
  let url: string | null = `/api/projects/${app.projectId}/events/?${new URLSearchParams({ limit: '1000', ...query })}`
  while (url) {
    const res = await app.http.inject({ method: 'GET', url, headers: app.auth })
    if (res.statusCode !== 200) throw new Error(`events API answered ${res.statusCode}: ${res.body}`)
    const body = res.json() as { next: string | null; results: EventJson[] }
    out.push(...body.results)
    url = body.next ? new URL(body.next).pathname + new URL(body.next).search : null
  }
  return out
}

/** Polls the events API until at least `count` events match (the worker stores asynchronously). */
export async function waitForEvents(app: TestApp, count: number, query: Record<string, string> = {}): Promise<EventJson[]> {
  for (let i = 0; i < 400; i++) {
    const events = await readAllEvents(app, query)
    if (events.length >= count) return events
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`fewer than ${count} events became readable`)
}

/** A posthog-js style event (what the browser puts in a batch). */
export function aBrowserEvent(token: string, overrides: Record<string, unknown> = {}) {
  const props = (overrides.properties as Record<string, unknown> | undefined) ?? {}
  return {
    uuid: overrides.uuid ?? crypto.randomUUID(),
    event: '$pageview',
    timestamp: new Date().toISOString(),
    ...overrides,
    properties: {
      token,
      distinct_id: 'browser-user',
      $device_id: 'device-1',
      $session_id: 'session-1',
      $lib: 'web',
      $lib_version: '1.449.2',
      $current_url: 'https://app.example.com/pricing',
      ...props,
    },
  }
}
