// The notification part of `npm run bench:ingest` (BENCH_NOTIFY=1): 10 actions set to notify and 2
// webhook destinations matching half the events, then the same /batch/ load as the plain phase. The
// receivers run in the bench process (their CPU is not Tally's); the delivery delay of a destination
// message is its arrival minus the event's stored timestamp (the bodies' timestamps equal their
// sent_at, so the stored timestamp is when Tally received the request).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { browserProperties } from './ingest-payloads.ts'

export const NOTIFY_ACTIONS = 10
/** Events of a notify body that are `signed up` (each triggers one of the 10 actions): 1 in 100. */
const SIGNUP_EVERY = 100

/** Env for the measured server: loopback receivers allowed, limits above the bench's rate. */
export const NOTIFY_SERVER_ENV = {
  TALLY_WEBHOOK_ALLOW: '127.0.0.1',
  TALLY_WEBHOOK_RATE_PER_SECOND: '100000',
  TALLY_WEBHOOK_CONCURRENCY: '16',
  TALLY_WEBHOOK_BACKLOG_LIMIT: '10000000',
}

/** A /batch/ body whose events carry `half` (yes on every other event) and, 1 in 100, a sign-up for an action. */
export function gzipNotifyBody(token: string, n: number, seed: number): Buffer {
  const sentAt = new Date().toISOString()
  const batch = Array.from({ length: n }, (_, k) => {
    const i = seed * n + k
    const signup = i % SIGNUP_EVERY === 0
    const properties = { ...browserProperties(token, i), half: i % 2 === 0 ? 'yes' : 'no', ...(signup ? { $current_url: `https://app.example.com/signup?a=${(i / SIGNUP_EVERY) % NOTIFY_ACTIONS}` } : {}) }
    // The timestamp is sent_at: the stored timestamp becomes the server's receipt time.
    return { event: signup ? 'signed up' : k % 10 === 0 ? '$autocapture' : '$pageview', timestamp: sentAt, properties }
  })
  return gzipSync(JSON.stringify({ api_key: token, batch, sent_at: sentAt }))
}

export interface Receivers {
  url(path: string): string
  /** Destination messages received, and their delays (ms) from the event's stored timestamp. */
  destinations: { count: number; delays: number[] }
  chat: { count: number }
  close(): Promise<void>
}

export async function startReceivers(): Promise<Receivers> {
  const destinations = { count: 0, delays: [] as number[] }
  const chat = { count: 0 }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const at = Date.now()
      if (req.url === '/chat') chat.count++
      else {
        destinations.count++
        const ts = Date.parse((JSON.parse(Buffer.concat(chunks).toString()) as { ts: string }).ts)
        destinations.delays.push(at - ts)
      }
      res.writeHead(200).end()
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    destinations,
    chat,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()) }),
  }
}

/** The project's chat webhook, 10 notifying actions (one per sign-up URL) and 2 destinations on `half = yes`. */
export async function setUpNotifications(url: string, projectId: number, auth: string, receivers: Receivers): Promise<void> {
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${url}/api/projects/${projectId}${path}`, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`)
  }
  await call('PATCH', '/', { slack_incoming_webhook: receivers.url('/chat') })
  for (let a = 0; a < NOTIFY_ACTIONS; a++) {
    await call('POST', '/actions/', {
      name: `signed up via ${a}`,
      post_to_chat: true,
      steps: [{ event: 'signed up', url: `signup?a=${a}`, url_matching: 'contains' }],
    })
  }
  for (const name of ['warehouse', 'crm']) {
    await call('POST', '/destinations/', {
      name,
      url: receivers.url(`/${name}`),
      filters: { properties: [{ key: 'half', value: 'yes', operator: 'exact', type: 'event' }] },
      body_template: '{"ts": "{event.timestamp}"}',
    })
  }
}

/** The p-th percentile of `values` (nearest rank). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/** One plain round and one notifying round, on the same server, project and load. */
export interface NotifyRound {
  plainMsPer1000: number
  notifyMsPer1000: number
  /** Destination messages delivered in the notifying round, and their delay p99 (ms). */
  delivered: number
  expected: number
  p99: number
}

export interface RoundDeps {
  url: string
  projectId: number
  auth: string
  /** Sends `requests` of the bodies, each answered; the events accepted. */
  load(bodies: Buffer[], requests: number): Promise<number>
  /** Until the last event sent is readable. */
  readable(): Promise<void>
  /** The server's CPU seconds so far. */
  cpu(): number
}

/**
 * BENCH_NOTIFY_ROUNDS=n: n rounds of the notify load with notifications off (the chat webhook unset,
 * the destinations disabled: the notify step finds no rules), then on, one after the other, so the
 * machine's load drifts over both alike. CPU per event of each, counted until the notifying round's
 * destination messages are all delivered. A round is a fixed number of requests
 * (BENCH_NOTIFY_ROUND_REQUESTS, 50 of 100 events), every one answered before the count: on a loaded
 * machine a timed phase ends with requests in flight whose events are stored but not counted.
 */
export async function alternateRounds(deps: RoundDeps, rounds: number, token: string, batchSize: number): Promise<NotifyRound[]> {
  const receivers = await startReceivers()
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${deps.url}/api/projects/${deps.projectId}${path}`, { method, headers: { authorization: deps.auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`)
    return res.json() as Promise<any>
  }
  const destinations = ((await call('GET', '/destinations/')).results as Array<{ id: number; name: string }>)
  const notifying = async (on: boolean) => {
    await call('PATCH', '/', { slack_incoming_webhook: on ? receivers.url('/chat') : null })
    for (const d of destinations) await call('PATCH', `/destinations/${d.id}/`, { enabled: on, url: receivers.url(`/${d.name}`) })
  }
  const requests = Number(process.env.BENCH_NOTIFY_ROUND_REQUESTS ?? 50)
  const out: NotifyRound[] = []
  const bodies = Array.from({ length: 8 }, (_, i) => gzipNotifyBody(token, batchSize, 100 + i))
  for (let r = 0; r < rounds; r++) {
    await notifying(false)
    let cpu0 = deps.cpu()
    const plainEvents = await deps.load(bodies, requests)
    await deps.readable()
    const plainMsPer1000 = (1e6 * (deps.cpu() - cpu0)) / plainEvents

    await notifying(true)
    const before = receivers.destinations.count
    const delaysFrom = receivers.destinations.delays.length
    cpu0 = deps.cpu()
    const events = await deps.load(bodies, requests)
    await deps.readable()
    // Half the events, two destinations: one message per accepted event.
    const deadline = performance.now() + 120_000
    while (receivers.destinations.count - before < events && performance.now() < deadline) await new Promise((res) => setTimeout(res, 50))
    // Events stored but not counted as accepted (requests cut at the phase's end) send too: until a quiet second.
    for (let seen = -1; seen !== receivers.destinations.count && performance.now() < deadline; ) {
      seen = receivers.destinations.count
      await new Promise((res) => setTimeout(res, 1000))
    }
    out.push({
      plainMsPer1000,
      notifyMsPer1000: (1e6 * (deps.cpu() - cpu0)) / events,
      delivered: receivers.destinations.count - before,
      expected: events,
      p99: percentile(receivers.destinations.delays.slice(delaysFrom), 99),
    })
  }
  await notifying(false)
  await receivers.close()
  return out
}
