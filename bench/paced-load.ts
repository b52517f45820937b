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
  p50: number
  p99: number
  max: number
  /** Answers that were not 2xx, plus transport errors. */
  failed: number
}

export interface PacedLoad {
  port: number
  path: string
  /** Requests per second, spread evenly. */
  rate: number
  seconds: number
  body: () => string
  /** Most requests in flight at once before the run counts as saturated; default 256. */
  maxInFlight?: number
}

/** Runs a paced load and returns its latency figures in milliseconds. */
export async function pacedLoad(opts: PacedLoad): Promise<PacedRun> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.maxInFlight ?? 256 })
  const total = Math.round(opts.rate * opts.seconds)
  const latencies = new Float64Array(total)
  let answered = 0
  let failed = 0
  let sent = 0
  let inFlight = 0
  const start = performance.now()
  const intervalMs = 1000 / opts.rate

  const send = (due: number) => {
    inFlight++
    const payload = opts.body()
    const req = http.request(
      { agent, host: '127.0.0.1', port: opts.port, path: opts.path, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        res.on('data', () => {})
        res.on('end', () => {
          inFlight--
          if (res.statusCode === undefined || res.statusCode >= 300) failed++
          latencies[answered++] = performance.now() - due
        })
      },
    )
    req.on('error', () => {
      inFlight--
      failed++
    })
    req.end(payload)
  }

  await new Promise<void>((resolve, reject) => {
    const tick = () => {
      const now = performance.now()
      // Everything that has fallen due since the last tick, each with the time it was due.
      while (sent < total && start + sent * intervalMs <= now) {
        if (inFlight >= (opts.maxInFlight ?? 256)) return reject(new Error(`paced load saturated: ${inFlight} requests in flight`))
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
  const at = (q: number) => Number(sorted[Math.min(answered - 1, Math.floor(q * answered))].toFixed(2))
  return { rps: answered / elapsed, answered, p50: at(0.5), p99: at(0.99), max: Number(sorted[answered - 1].toFixed(2)), failed }
}
