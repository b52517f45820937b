import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'

// Through a real listening server: `inject` would fake the remote address.

async function listen(app: TestApp): Promise<string> {
  await app.http.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.http.server.address() as AddressInfo).port}`
}

/** Captures one event with `headers` and returns the `$ip` it was stored with (events API). */
async function storedIp(app: TestApp, base: string, headers: Record<string, string>): Promise<unknown> {
  const tag = crypto.randomUUID()
  const res = await fetch(`${base}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ api_key: app.projectKey, batch: [{ event: `ip-check-${tag}`, distinct_id: 'u1', properties: {} }] }),
  })
  assert.equal(res.status, 200)
  const events = await waitForEvents(app, 1, { event: `ip-check-${tag}` })
  assert.equal(events.length, 1)
  return events[0]!.properties.$ip
}

/** The `next` link of an events page asked for with `headers`. */
async function nextLink(app: TestApp, base: string, headers: Record<string, string>): Promise<string> {
  const res = await fetch(`${base}/api/projects/${app.projectId}/events/?limit=1`, { headers: { ...app.auth, ...headers } })
  assert.equal(res.status, 200)
  const body = (await res.json()) as { next: string | null }
  assert.ok(body.next, 'expected a next page')
  return body.next
}

const FORGED = {
  'x-forwarded-for': '203.0.113.9',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-port': '4443',
}

test('by default no X-Forwarded-* header is believed: $ip is the socket address, next links keep the real host and scheme', async (t) => {
  const app = await buildTestApp(t)
  const base = await listen(app)
  assert.equal(await storedIp(app, base, FORGED), '127.0.0.1')
  await storedIp(app, base, {}) // a second event, so the list has a next page
  const next = await nextLink(app, base, FORGED)
  assert.ok(next.startsWith(`${base}/api/projects/${app.projectId}/events/?`), next)
})

test('from a configured proxy, X-Forwarded-For and -Proto are believed (up to the first untrusted hop)', async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_TRUSTED_PROXIES: '127.0.0.1' } })
  const base = await listen(app)
  assert.equal(await storedIp(app, base, { 'x-forwarded-for': '203.0.113.9' }), '203.0.113.9')
  // A client-supplied first hop is not taken: the proxy (trusted) appended the address it saw.
  assert.equal(await storedIp(app, base, { 'x-forwarded-for': '198.51.100.1, 203.0.113.10' }), '203.0.113.10')
  const next = await nextLink(app, base, { 'x-forwarded-proto': 'https' })
  assert.ok(next.startsWith('https://127.0.0.1:'), next)
})

test('a trusted CIDR range that does not contain the peer changes nothing', async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_TRUSTED_PROXIES: '10.0.0.0/8, 192.168.0.0/16' } })
  const base = await listen(app)
  assert.equal(await storedIp(app, base, FORGED), '127.0.0.1')
  await storedIp(app, base, {})
  const next = await nextLink(app, base, FORGED)
  assert.ok(next.startsWith(`${base}/`), next)
})
