// npm run bench:low-rate — Tally's CPU at the steady, low rates most installations see: single /e/
// events (posthog-js-like properties, as server SDKs with flushAt 1 send them) at LOW_RATES events/s
// (default 10,50,200,1000) for LOW_SECONDS each (default 15), evenly spaced (bench/paced-load.ts), on a
// fresh embedded data dir; first LOW_IDLE_SECONDS (default 10) of idle. For each rate: CPU per second
// and per event of the Tally process (all threads, /proc), against the parse-only route (bench/
// ceiling-server.ts: JSON.parse and {status: 1}) at the same rate in the same run, and how many
// micro-batches the worker stored (each costs a few ms whatever its size: the linger,
// TALLY_FLUSH_INTERVAL_MS, sets how many there are). Not a test: it prints.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { generateToken } from '../src/shared/ids.ts'
import { singleEventBody } from './ingest-payloads.ts'
import { pacedLoad } from './paced-load.ts'
import { tallyMain, cpuSeconds, readMetrics, startServer, stopServer, TALLY_READY } from './server-process.ts'

const RATES = (process.env.LOW_RATES ?? '10,50,200,1000').split(',').map(Number)
const SECONDS = Number(process.env.LOW_SECONDS ?? 15)
const IDLE_SECONDS = Number(process.env.LOW_IDLE_SECONDS ?? 10)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Figures {
  ok: number
  failed: number
  cpuMsPerSecond: number
  cpuUsPerEvent: number
  p99: number
}

/** Sends `rate` single events a second for SECONDS to `url`; the server's CPU over that time and 1 s after. */
async function measure(pid: number, url: string, rate: number, body: (i: number) => string): Promise<Figures> {
  let i = 0
  const cpu0 = cpuSeconds(pid)
  const t0 = performance.now()
  const run = await pacedLoad({ url, rate, seconds: SECONDS, body: () => body(i++), connections: 8 })
  // The last micro-batch lingers, then is stored: its CPU belongs to this rate.
  await sleep(1000)
  const cpu = cpuSeconds(pid) - cpu0
  const seconds = (performance.now() - t0) / 1000
  return { ok: run.ok, failed: run.failed, cpuMsPerSecond: (cpu / seconds) * 1000, cpuUsPerEvent: (cpu / Math.max(1, run.ok)) * 1e6, p99: run.p99 }
}

/** Micro-batches written to the event store so far (`tally_event_store_batch_seconds_count`, /_metrics). */
async function storedBatches(url: string, auth: string): Promise<number> {
  return (await readMetrics(url, auth, { n: 'tally_event_store_batch_seconds_count{outcome="ok"}' })).n ?? 0
}

async function main() {
  const token = generateToken('phc_')
  const personal = generateToken('phx_')
  const auth = `Bearer ${personal}`
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-low-rate-'))

  const ceiling = await startServer(['--import', 'tsx', 'bench/ceiling-server.ts'], { ready: /ceiling ready on (http:\/\/\S+)/ })
  const ceilingFigures = new Map<number, Figures>()
  for (const rate of RATES) ceilingFigures.set(rate, await measure(ceiling.pid, `${ceiling.url}/parse/`, rate, (i) => singleEventBody(token, i)))
  await stopServer(ceiling)

  const tally = await startServer([tallyMain(), 'serve', '--port', '0', '--data-dir', dataDir], {
    env: { TALLY_PROJECT_API_KEY: token, TALLY_PERSONAL_API_KEY: personal, TALLY_LOG_LEVEL: 'info' },
    ready: TALLY_READY,
    log: true,
  })
  // Start-up work (migrations, the person cache's warm-up, V8 compiling) is over before the idle figure.
  await sleep(5000)
  const idle0 = cpuSeconds(tally.pid)
  await sleep(IDLE_SECONDS * 1000)
  const idleMs = ((cpuSeconds(tally.pid) - idle0) / IDLE_SECONDS) * 1000
  const flush = process.env.TALLY_FLUSH_INTERVAL_MS ?? 'default'
  console.log(`single /e/ events, ${SECONDS} s per rate, TALLY_FLUSH_INTERVAL_MS ${flush}, ${os.cpus().length} CPUs`)
  console.log(`Tally idle: ${idleMs.toFixed(0)} ms CPU per second`)
  console.log('rate/s | Tally ms CPU/s | Tally us/event | parse-only us/event | ratio | micro-batches/s | p99 ms | failed')
  for (const rate of RATES) {
    const b0 = await storedBatches(tally.url, auth)
    const f = await measure(tally.pid, `${tally.url}/e/`, rate, (i) => singleEventBody(token, i))
    const batches = ((await storedBatches(tally.url, auth)) - b0) / (SECONDS + 1)
    const c = ceilingFigures.get(rate)!
    console.log(
      [rate, f.cpuMsPerSecond.toFixed(0), f.cpuUsPerEvent.toFixed(0), c.cpuUsPerEvent.toFixed(0), `${(f.cpuUsPerEvent / c.cpuUsPerEvent).toFixed(1)}x`,
        batches.toFixed(1), f.p99.toFixed(1), f.failed + c.failed].join(' | '),
    )
  }
  await stopServer(tally)
  await rm(dataDir, { recursive: true, force: true })
}

await main()
