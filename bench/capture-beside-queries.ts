// `node --import tsx bench/capture-beside-queries.ts`: issue 29's measurement of capture and readiness
// while four heavy insight queries compute. Tally (embedded stores, 2,000 seeded events) serves
// /batch/ (50 events, one request at a time) and /_ready (polled every 250 ms) for BENCH_SECONDS
// (default 10) alone, then as long again beside four cartesian joins started through the query
// service (admitted in one project). Prints batches acknowledged, their slowest acknowledgement,
// and readiness answers, in both phases. The machine's other load shows in both: compare them.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { createApp } from '../src/app/create-app.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { generateToken } from '../src/shared/ids.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const HEAVY = 'SELECT count() FROM events a JOIN events b ON a.distinct_id != b.distinct_id JOIN events c ON b.distinct_id != c.distinct_id'

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-bench-'))
const env = {
  TALLY_DATA_DIR: dataDir,
  TALLY_PROJECT_API_KEY: generateToken('phc_'),
  TALLY_PERSONAL_API_KEY: generateToken('phx_'),
  TALLY_LOG_LEVEL: 'silent',
  TALLY_QUERY_CONCURRENCY_PER_PROJECT: '4',
  TALLY_QUERY_TIMEOUT_MS: '600000',
}
const app = await createApp(loadConfig({}, env), pino({ level: 'silent' }))
const [project] = await app.services.projects.listProjects()
const events = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ event: tag, distinct_id: `p-${i % 50}`, uuid: crypto.randomUUID(), properties: { i } }))
await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: env.TALLY_PROJECT_API_KEY, batch: events(2000, 'seed') } })
const count = async () => Number(((await app.services.queries.run(project!, { kind: 'HogQLQuery', query: 'SELECT count() FROM events' })).results as number[][])[0]![0])
while ((await count()) < 2000) await new Promise((r) => setTimeout(r, 100))
const host = await app.http.listen({ host: '127.0.0.1', port: 0 })

async function phase(name: string): Promise<void> {
  const end = performance.now() + SECONDS * 1000
  let batches = 0
  let slowest = 0
  const ready: Record<number, number> = {}
  const poll = (async () => {
    while (performance.now() < end) {
      const status = await fetch(`${host}/_ready`, { signal: AbortSignal.timeout(5000) }).then((r) => r.status, () => 0)
      ready[status] = (ready[status] ?? 0) + 1
      await new Promise((r) => setTimeout(r, 250))
    }
  })()
  let failed = 0
  while (performance.now() < end) {
    const started = performance.now()
    // Given up 5 s after the phase's end: a stalled request counts as failed, not as a hang.
    const signal = AbortSignal.timeout(Math.ceil(Math.max(1, end - started)) + 5000)
    const body = JSON.stringify({ api_key: env.TALLY_PROJECT_API_KEY, batch: events(50, 'bench') })
    const status = await fetch(`${host}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal }).then(
      async (res) => (await res.arrayBuffer(), res.status),
      () => 0,
    )
    if (status === 200) batches++
    else failed++
    slowest = Math.max(slowest, performance.now() - started)
  }
  await poll
  console.log(
    `${name}: ${batches} batches of 50 acknowledged in ${SECONDS} s (${failed} failed or given up), slowest ${Math.round(slowest)} ms; ` +
      `/_ready answers ${JSON.stringify(ready)} (0: no answer)`,
  )
}

await phase('alone')
const cancel = new AbortController()
for (let i = 0; i < 4; i++) void app.services.queries.run(project!, { kind: 'HogQLQuery', query: HEAVY }, { signal: cancel.signal }).catch(() => undefined)
while (app.services.queries.running() < 4) await new Promise((r) => setTimeout(r, 20))
await phase('beside four heavy queries')
cancel.abort()
await app.close()
await rm(dataDir, { recursive: true, force: true })
