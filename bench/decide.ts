// `npm run bench:decide`: /flags?v=2 throughput of Tally (embedded stores, 50 active flags, 100,000
// persons) against a bare Fastify route in the same run, p99 at a fixed 1,000 req/s, RSS, and the
// flag engine alone. Servers run in child processes so autocannon does not share their CPU.
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const DURATION = Number(process.argv[2] ?? 10)

async function start(mode: 'tally' | 'ceiling'): Promise<{ child: ChildProcess; port: number; token: string }> {
  const child = fork(path.join(HERE, 'decide-server.ts'), [mode], { execArgv: ['--import', 'tsx'], stdio: 'inherit' })
  const [msg] = (await once(child, 'message')) as [{ port: number; token: string }]
  return { child, port: msg.port, token: msg.token }
}

async function rss(child: ChildProcess): Promise<number> {
  child.send({ type: 'rss' })
  const [msg] = (await once(child, 'message')) as [{ rss: number }]
  return msg.rss
}

/** A posthog-js 1.4xx `/flags/?v=2` body for a random person (one in ten unknown to the server). */
function body(token: string): string {
  const n = Math.floor(Math.random() * 110_000)
  return JSON.stringify({
    token,
    distinct_id: `person-${n}`,
    groups: {},
    person_properties: { $initial_referring_domain: '$direct', $initial_current_url: 'https://app.example.com/', $lib: 'web', $lib_version: '1.449.2' },
    group_properties: {},
    timezone: 'Europe/Berlin',
    $device_id: `01936f0c-${n.toString(16).padStart(4, '0')}-7000-8000-000000000000`,
  })
}

async function load(port: number, token: string, opts: { connections: number; overallRate?: number }) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/flags/?v=2`,
    method: 'POST',
    connections: opts.connections,
    overallRate: opts.overallRate,
    duration: DURATION,
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: body(token) }) }],
  })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
}

const fmt = (r: { rps: number; p50: number; p99: number }) => `${Math.round(r.rps).toLocaleString('en')} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms`

const ceiling = await start('ceiling')
await load(ceiling.port, ceiling.token, { connections: 50 }) // warm-up run, discarded
const ceil = await load(ceiling.port, ceiling.token, { connections: 50 })
ceiling.child.send({ type: 'stop' })
console.log(`ceiling (bare Fastify route):   ${fmt(ceil)}`)

const tally = await start('tally')
await load(tally.port, tally.token, { connections: 50 })
const max = await load(tally.port, tally.token, { connections: 50 })
const fixed = await load(tally.port, tally.token, { connections: 20, overallRate: 1000 })
const memory = await rss(tally.child)
tally.child.send({ type: 'stop' })
console.log(`tally /flags?v=2 (saturated):   ${fmt(max)}  = ${((100 * max.rps) / ceil.rps).toFixed(0)} % of the ceiling`)
console.log(`tally /flags?v=2 at 1,000 req/s: ${fmt(fixed)}`)
console.log(`tally RSS after the runs:       ${(memory / 1024 / 1024).toFixed(0)} MB`)
console.log('flag engine alone (bench/flag-engine.ts):')
await import('./flag-engine.ts')
