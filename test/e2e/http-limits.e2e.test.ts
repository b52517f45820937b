import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { eventually } from '../helpers/eventually.ts'

// Every deadline below is asserted by what the socket sees (a 408, a close), never by how long it
// took; the test timeouts are only a generous bound so a missing deadline fails instead of hanging.

async function listen(app: TestApp): Promise<{ host: string; port: number }> {
  await app.http.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.http.server.address() as AddressInfo
  return { host: '127.0.0.1', port }
}

/** A raw socket: everything it received, and a promise of its close. */
async function rawSocket(addr: { host: string; port: number }) {
  const socket = net.connect(addr)
  let received = ''
  socket.on('data', (d) => (received += d.toString('latin1')))
  socket.on('error', () => undefined)
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  return { socket, closed, received: () => received }
}

/** Writes `chunks` one at a time, `everyMs` apart, until they run out or the socket closes. */
function trickle(socket: net.Socket, chunks: string[], everyMs: number): () => number {
  let sent = 0
  const timer = setInterval(() => {
    if (socket.destroyed || sent >= chunks.length) return clearInterval(timer)
    socket.write(chunks[sent++]!)
  }, everyMs)
  socket.once('close', () => clearInterval(timer))
  return () => sent
}

/** GET /_health on a new connection (no agent, no reuse). */
function healthOnFreshConnection(addr: { host: string; port: number }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ ...addr, path: '/_health', agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
  })
}

test('a body trickled one byte at a time is cut off at the request timeout with a 408', { timeout: 60_000 }, async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_REQUEST_TIMEOUT_MS: '1000', TALLY_HEADERS_TIMEOUT_MS: '1000' } })
  const addr = await listen(app)
  const body = JSON.stringify({ api_key: app.projectKey, batch: [{ event: 'slow', distinct_id: 'u', properties: {} }] }).padEnd(600, ' ')
  const conn = await rawSocket(addr)
  conn.socket.write(`POST /batch/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`)
  // 600 bytes at one per 100 ms would take a minute: the server must end it long before.
  const sent = trickle(conn.socket, [...body], 100)
  await conn.closed
  assert.ok(sent() < body.length, `the whole body was sent (${sent()} bytes) before the server closed`)
  assert.match(conn.received(), /^HTTP\/1\.1 408 /)
  // The process still serves everyone else.
  assert.equal(await healthOnFreshConnection(addr), 200)
})

test('headers that never finish are cut off at the headers timeout', { timeout: 60_000 }, async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_REQUEST_TIMEOUT_MS: '5000', TALLY_HEADERS_TIMEOUT_MS: '1000' } })
  const addr = await listen(app)
  const conn = await rawSocket(addr)
  conn.socket.write('POST /batch/ HTTP/1.1\r\nHost: x\r\n')
  // One header line every 200 ms, never the blank line that ends them.
  const lines = Array.from({ length: 300 }, (_, i) => `X-Slow-${i}: y\r\n`)
  const sent = trickle(conn.socket, lines, 200)
  await conn.closed
  assert.ok(sent() < lines.length, 'every header line was sent before the server closed')
  assert.match(conn.received(), /^HTTP\/1\.1 408 /)
  assert.equal(await healthOnFreshConnection(addr), 200)
})

test('a connection that sends nothing at all is closed at the idle timeout', { timeout: 60_000 }, async (t) => {
  // The request and headers deadlines are pushed far past the test's timeout: only idleness can close it.
  const app = await buildTestApp(t, { env: { TALLY_IDLE_TIMEOUT_MS: '1000', TALLY_REQUEST_TIMEOUT_MS: '0', TALLY_HEADERS_TIMEOUT_MS: '600000' } })
  const addr = await listen(app)
  const conn = await rawSocket(addr)
  await conn.closed
  assert.equal(await healthOnFreshConnection(addr), 200)
})

test('connections past the per-IP cap are closed at once; /_health answers again once others close', { timeout: 60_000 }, async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_MAX_CONNECTIONS_PER_IP: '3' } })
  const addr = await listen(app)
  const held = [await rawSocket(addr), await rawSocket(addr), await rawSocket(addr)]
  t.after(() => held.forEach((c) => c.socket.destroy()))
  // The server sees a connection slightly after the client: wait until all three are counted, by
  // a fourth being refused (it is closed without a byte of answer).
  const refused = await eventually(async () => {
    const extra = await rawSocket(addr)
    extra.socket.write('GET /_health HTTP/1.1\r\nHost: x\r\n\r\n')
    const outcome = await Promise.race([extra.closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('open'), 1000))])
    extra.socket.destroy()
    return outcome === 'closed' && extra.received() === '' ? extra : null
  }, 20, 50)
  assert.equal(refused.received(), '')
  await assert.rejects(healthOnFreshConnection(addr), 'a fresh connection past the cap is refused too')

  // The three held connections are served normally (keep-alive, two requests on one).
  const first = held[0]!
  first.socket.write('GET /_health HTTP/1.1\r\nHost: x\r\n\r\nGET /_health HTTP/1.1\r\nHost: x\r\n\r\n')
  await eventually(async () => (first.received().match(/HTTP\/1\.1 200 /g)?.length ?? 0) === 2, 100, 50)

  // Closed sockets give their slots back.
  for (const c of held) c.socket.destroy()
  await Promise.all(held.map((c) => c.closed))
  assert.equal(await eventually(() => healthOnFreshConnection(addr).catch(() => null), 50, 50), 200)
  // Again and again: slots are not leaked by refused or closed connections.
  for (let i = 0; i < 10; i++) assert.equal(await healthOnFreshConnection(addr), 200)
})

test('a trusted proxy is exempt from the per-IP cap (its clients share its address)', { timeout: 60_000 }, async (t) => {
  const app = await buildTestApp(t, { env: { TALLY_MAX_CONNECTIONS_PER_IP: '2', TALLY_TRUSTED_PROXIES: '127.0.0.1' } })
  const addr = await listen(app)
  const held = await Promise.all(Array.from({ length: 5 }, () => rawSocket(addr)))
  t.after(() => held.forEach((c) => c.socket.destroy()))
  for (const c of held) c.socket.write('GET /_health HTTP/1.1\r\nHost: x\r\n\r\n')
  await eventually(async () => held.every((c) => /^HTTP\/1\.1 200 /.test(c.received())), 100, 50)
})

test('the timeout and cap settings are validated', async () => {
  const { loadConfig } = await import('../../src/config/load-config.ts')
  assert.throws(() => loadConfig({}, { TALLY_REQUEST_TIMEOUT_MS: '1000', TALLY_HEADERS_TIMEOUT_MS: '5000' }), /TALLY_HEADERS_TIMEOUT_MS/)
  assert.throws(() => loadConfig({}, { TALLY_MAX_CONNECTIONS_PER_IP: '-1' }), /TALLY_MAX_CONNECTIONS_PER_IP/)
  assert.throws(() => loadConfig({}, { TALLY_TRUSTED_PROXIES: '10.0.0.1, example.com' }), /example\.com/)
  const c = loadConfig({}, { TALLY_TRUSTED_PROXIES: '10.0.0.0/8, ::1, loopback, 192.168.0.0/255.255.0.0' })
  assert.deepEqual(c.http.trustedProxies, ['10.0.0.0/8', '::1', 'loopback', '192.168.0.0/255.255.0.0'])
  // Defaults suited to SDK traffic: a 20 MB body has minutes, keep-alive outlives a 60 s balancer.
  const d = loadConfig({}, {})
  assert.ok(d.http.requestTimeoutMs >= 120_000 && d.http.keepAliveTimeoutMs > 60_000 && d.http.maxConnectionsPerIp > 0)
  assert.deepEqual(d.http.trustedProxies, [])
})

test('a body under the minimum receive rate for a whole window is cut with a 408 in PostHog shape; a slow link that keeps up passes', { timeout: 120_000 }, async (t) => {
  // The request timeout is pushed far out: only the receive rate (100 B/s over 1 s) can end the trickle.
  const app = await buildTestApp(t, { env: { TALLY_REQUEST_TIMEOUT_MS: '0', TALLY_IDLE_TIMEOUT_MS: '0', TALLY_MIN_RECEIVE_BYTES_PER_SECOND: '100', TALLY_MIN_RECEIVE_WINDOW_MS: '1000' } })
  const addr = await listen(app)
  const body = JSON.stringify({ api_key: app.projectKey, batch: [{ event: 'trickled', distinct_id: 'u', properties: {} }] }).padEnd(600, ' ')
  const conn = await rawSocket(addr)
  conn.socket.write(`POST /batch/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`)
  // One byte per 200 ms: 5 B/s, a minute for the whole body.
  const sent = trickle(conn.socket, [...body], 200)
  await conn.closed
  assert.ok(sent() < body.length, `the whole body was sent (${sent()} bytes) before the server closed`)
  const answer = conn.received()
  assert.match(answer, /^HTTP\/1\.1 408 /)
  const json = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
  assert.deepEqual([json.type, json.code, json.attr], ['client_error', 'request_timeout', null])
  assert.match(json.detail, /TALLY_MIN_RECEIVE_BYTES_PER_SECOND/)

  // 3 KB at 500 B/s (50 bytes per 100 ms), five times the minimum: a large batch on a slow link is accepted.
  const events = Array.from({ length: 20 }, (_, i) => ({ event: 'slow link', distinct_id: `u${i}`, properties: { pad: 'x'.repeat(100) } }))
  const slowBody = JSON.stringify({ api_key: app.projectKey, batch: events })
  const slow = await rawSocket(addr)
  slow.socket.write(`POST /batch/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${slowBody.length}\r\nConnection: close\r\n\r\n`)
  const chunks = slowBody.match(/[\s\S]{1,50}/g)!
  trickle(slow.socket, chunks, 100)
  await slow.closed
  assert.match(slow.received(), /^HTTP\/1\.1 200 /)
  assert.equal(await healthOnFreshConnection(addr), 200)
})
