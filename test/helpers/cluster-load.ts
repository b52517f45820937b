import { randomUUID } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { PostHog } from 'posthog-node'

/** One capture request as the load saw it: when it went out, when it was answered, how. */
export interface RequestRecord {
  startMs: number
  endMs: number
  /** HTTP status, or 0 when the connection failed. */
  status: number
  uuids: string[]
}

/** What a load run sent and what came back, per event uuid. */
export interface LoadLedger {
  requests: RequestRecord[]
  /** Events answered 200. */
  acked: Set<string>
  /** Events whose request got anything else (a status, or no answer). */
  errored: Set<string>
  sent: number
}

export interface LoadOptions {
  /** Capture processes' base URLs; the load is spread over all of them. */
  targets: string[]
  projectKey: string
  /** Events in all (posthog-node and raw HTTP together). */
  events: number
  /** Events per second in all; the stream lasts about events / rate seconds. */
  rate: number
  /** Events per request. */
  batchSize: number
  /** Called after every request (the fault scenario watches the progress). */
  onProgress?: (sent: number) => void
}

/**
 * Streams events into the capture processes: per target one posthog-node client (its requests
 * seen through its `fetch` option, so every event's answer is known) and one raw HTTP `/batch/`
 * sender, each paced to its share of `rate`. Nothing is retried: an event whose request failed
 * is recorded as errored and never sent again.
 */
export async function streamEvents(o: LoadOptions): Promise<LoadLedger> {
  const ledger: LoadLedger = { requests: [], acked: new Set(), errored: new Set(), sent: 0 }
  const record = (r: RequestRecord) => {
    ledger.requests.push(r)
    for (const u of r.uuids) (r.status === 200 ? ledger.acked : ledger.errored).add(u)
    ledger.sent += r.uuids.length
    o.onProgress?.(ledger.sent)
  }
  const senders = o.targets.length * 2
  const share = Math.floor(o.events / senders)
  const perSenderRate = o.rate / senders
  const jobs: Promise<void>[] = []
  o.targets.forEach((target, i) => {
    jobs.push(paced(share, o.batchSize, perSenderRate, (n, k) => rawBatch(target, o.projectKey, n, `raw-${i}-${k}`, record)))
    jobs.push(posthogNodeSender(target, o.projectKey, share, o.batchSize, perSenderRate, i, record))
  })
  await Promise.all(jobs)
  return ledger
}

/** Runs `send(n)` for batches of `batchSize` until `total`, keeping to `rate` events/s. */
async function paced(total: number, batchSize: number, rate: number, send: (n: number, k: number) => Promise<void>) {
  const start = performance.now()
  for (let done = 0, k = 0; done < total; k++) {
    const n = Math.min(batchSize, total - done)
    await send(n, k)
    done += n
    const due = start + (done / rate) * 1000
    const wait = due - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
  }
}

function someEvent(i: number, who: string) {
  return { event: 'cluster_event', distinct_id: `${who}-${i % 50}`, uuid: randomUUID(), properties: { i, who, $current_url: 'https://app.example.com/x' } }
}

async function rawBatch(target: string, key: string, n: number, who: string, record: (r: RequestRecord) => void) {
  const batch = Array.from({ length: n }, (_, i) => someEvent(i, who))
  const startMs = Date.now()
  let status = 0
  try {
    const res = await fetch(`${target}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: key, batch }), signal: AbortSignal.timeout(30_000) })
    status = res.status
    await res.arrayBuffer()
  } catch {
    status = 0
  }
  record({ startMs, endMs: Date.now(), status, uuids: batch.map((e) => e.uuid) })
}

/** posthog-node on `target`: its requests go through a fetch that records each event's answer. */
async function posthogNodeSender(target: string, key: string, total: number, batchSize: number, rate: number, i: number, record: (r: RequestRecord) => void) {
  const fetchRecording = async (url: string, options: { method: string; headers: Record<string, string>; body?: unknown }) => {
    const startMs = Date.now()
    const uuids = uuidsOf(options.body, options.headers)
    try {
      const res = await fetch(url, { method: options.method, headers: options.headers, body: options.body as BodyInit, signal: AbortSignal.timeout(30_000) })
      const text = await res.text()
      if (uuids.length) record({ startMs, endMs: Date.now(), status: res.status, uuids })
      return { status: res.status, text: async () => text, json: async () => JSON.parse(text) as unknown, headers: res.headers }
    } catch (err) {
      if (uuids.length) record({ startMs, endMs: Date.now(), status: 0, uuids })
      throw err
    }
  }
  const client = new PostHog(key, {
    host: target,
    flushAt: batchSize,
    flushInterval: 0,
    fetchRetryCount: 0,
    maxQueueSize: batchSize * 4,
    disableCompression: true,
    fetch: fetchRecording as never,
  })
  client.on('error', () => undefined)
  await paced(total, batchSize, rate, async (n, k) => {
    for (let j = 0; j < n; j++) {
      const e = someEvent(j, `node-${i}-${k}`)
      client.capture({ distinctId: e.distinct_id, event: e.event, properties: e.properties, uuid: e.uuid })
    }
    await client.flush().catch(() => undefined)
  })
  await client.shutdown().catch(() => undefined)
}

/** The event uuids of a posthog-node `/batch/` body (JSON, gzip when compressed). */
function uuidsOf(body: unknown, headers: Record<string, string>): string[] {
  if (body === undefined || body === null) return []
  let text: string
  if (typeof body === 'string') text = body
  else if (body instanceof Uint8Array) text = (headers['Content-Encoding'] ?? headers['content-encoding']) === 'gzip' ? gunzipSync(body).toString() : Buffer.from(body).toString()
  else return []
  try {
    const parsed = JSON.parse(text) as { batch?: Array<{ uuid?: string }> }
    return (parsed.batch ?? []).map((e) => e.uuid).filter((u): u is string => typeof u === 'string')
  } catch {
    return []
  }
}
