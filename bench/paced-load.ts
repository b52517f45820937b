// An open-loop load at a steady rate: one request every 1/rate seconds over a pool of keep-alive
// connections, latency counted from when each request was due (so a stalled client or server
// cannot hide its delay: no coordinated omission). autocannon's `overallRate` is not this: each
// connection sends its whole per-second budget back to back at the top of every second, so "1,000
// req/s" there is a burst of 1,000 requests at full concurrency once a second.
import http from 'node:http'

export interface PacedRun {
  /** Requests answered per second over the run. */
  rps: number
  answered: number
  /** 2xx answers. */
  ok: number
  /** Answers by status code. */
  statuses: Record<number, number>
  /** Transport errors (no answer). */
  errors: number
  /** Answers that were not 2xx, plus transport errors. */
  failed: number
  p50: number
  p99: number
  max: number
}

export interface PacedLoad {
  /** Where to send, e.g. `http://127.0.0.1:8000/flags/?v=2`. */
  url: string
  /** Requests per second, spread evenly. */
  rate: number
  seconds: number
  body: () => string | Buffer
  /** Default `content-type: application/json`. */
  headers?: Record<string, string>
  /** Keep-alive connections at most (default 64); requests due while all are busy wait for one. */
  connections?: number
  /** Requests in flight at once before the run gives up as hopelessly behind (default 10,000). */
  maxInFlight?: number
}

/** Runs a paced load and returns its latency figures in milliseconds. */
export async function pacedLoad(opts: PacedLoad): Promise<PacedRun> {
  const target = new URL(opts.url)
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections ?? 64 })
  const headers = opts.headers ?? { 'content-type': 'application/json' }
  const maxInFlight = opts.maxInFlight ?? 10_000
  const total = Math.round(opts.rate * opts.seconds)
  const latencies = new Float64Array(total)
  const statuses: Record<number, number> = {}
  let answered = 0
  let errors = 0
  let sent = 0
  let inFlight = 0
  const start = performance.now()
  const intervalMs = 1000 / opts.rate

  const send = (due: number) => {
    inFlight++
    const payload = opts.body()
    const req = http.request(
      { agent, host: target.hostname, port: target.port, path: target.pathname + target.search, method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        res.on('data', () => {})
        res.on('end', () => {
          inFlight--
          const status = res.statusCode ?? 0
          statuses[status] = (statuses[status] ?? 0) + 1
          latencies[answered++] = performance.now() - due
        })
      },
    )
    req.on('error', () => {
      inFlight--
      errors++
    })
    req.end(payload)
  }

  await new Promise<void>((resolve, reject) => {
    const tick = () => {
      const now = performance.now()
      // Everything that has fallen due since the last tick, each with the time it was due.
      while (sent < total && start + sent * intervalMs <= now) {
        if (inFlight >= maxInFlight) return reject(new Error(`paced load hopelessly behind: ${inFlight} requests in flight`))
        send(start + sent * intervalMs)
        sent++
      }
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * intervalMs - performance.now()))
      else {
        const wait = () => (inFlight === 0 ? resolve() : setTimeout(wait, 5))
        wait()
      }
    }
    tick()
  })
  agent.destroy()
  const elapsed = (performance.now() - start) / 1000
  const sorted = latencies.subarray(0, answered).sort()
  const at = (q: number) => (answered === 0 ? NaN : Number(sorted[Math.min(answered - 1, Math.floor(q * answered))]!.toFixed(2)))
  const ok = Object.entries(statuses).reduce((n, [code, count]) => (Number(code) >= 200 && Number(code) < 300 ? n + count : n), 0)
  return { rps: answered / elapsed, answered, ok, statuses, errors, failed: answered - ok + errors, p50: at(0.5), p99: at(0.99), max: at(1) }
}
