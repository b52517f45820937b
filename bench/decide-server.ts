// Child process of bench/decide.ts: `tally` seeds embedded stores with 50 active flags, 100,000
// persons and 2,000 events, then restarts Tally on them (as a real server starts on existing data);
// `ceiling` starts a bare Fastify route. Over IPC: its port, CPU time (the process's, and the main
// thread's alone), RSS and person-cache counters on request, `restart` (with or without the
// person-cache warm-up, waiting for it to finish), and `heavy` (starts or cancels four heavy insight
// queries: cartesian joins over the events, the saturating member).
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import os from 'node:os'
import path from 'node:path'
import Fastify from 'fastify'
import pino from 'pino'
import { createApp } from '../src/app/create-app.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { generateToken } from '../src/shared/ids.ts'

export const PERSONS = 100_000
const EVENTS = 2000
/** Never ends on 2,000 events (8e9 rows per join level): runs until cancelled. */
const HEAVY = 'SELECT count() FROM events a JOIN events b ON a.distinct_id != b.distinct_id JOIN events c ON b.distinct_id != c.distinct_id'

/** CPU time of this process's main thread (the event loop) in µs, from /proc (clock ticks of 10 ms). */
function mainThreadCpuMicros(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

const person = (key: string, value: unknown, operator = 'exact') => ({ key, value, operator, type: 'person' })
const variants = { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] }

/** 50 flags of mixed shapes: rollouts, property conditions of every kind, multivariate with payloads. */
function benchFlags(): object[] {
  const shapes = [
    () => ({ groups: [{ properties: [], rollout_percentage: 30 }] }),
    () => ({ groups: [{ properties: [person('email', '@acme.com', 'icontains')], rollout_percentage: 50 }] }),
    () => ({ groups: [{ properties: [person('plan', ['pro', 'enterprise'])] }, { properties: [person('country', 'DE')], rollout_percentage: 20 }] }),
    () => ({ groups: [{ properties: [], rollout_percentage: 60 }], multivariate: variants, payloads: { control: '{"x":1}', test: '{"x":2}' } }),
    () => ({ groups: [{ properties: [person('age', '30', 'gt'), person('email', '^[a-m]', 'regex')] }] }),
    () => ({ groups: [{ properties: [person('app_version', '1.4.0', 'semver_gte')] }] }),
    () => ({ groups: [{ properties: [person('signup', '-30d', 'is_date_after')], rollout_percentage: 80 }] }),
    () => ({ groups: [{ properties: [person('plan', 'pro')], variant: 'test' }, { properties: [] }], multivariate: variants }),
    () => ({ groups: [{ properties: [person('country', ['US', 'GB']), person('age', '50', 'lt')], rollout_percentage: 75 }] }),
    () => ({ groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"on":true}' } }),
  ]
  return Array.from({ length: 50 }, (_, i) => ({ key: `bench-flag-${i}`, filters: shapes[i % shapes.length]() }))
}

async function startTally() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-bench-'))
  const env = {
    TALLY_DATA_DIR: dataDir,
    TALLY_PROJECT_API_KEY: generateToken('phc_'),
    TALLY_PERSONAL_API_KEY: generateToken('phx_'),
    TALLY_LOG_LEVEL: 'silent',
    // All four heavy queries are admitted (one project, no user): what is measured is their effect.
    TALLY_QUERY_CONCURRENCY_PER_PROJECT: '4',
    // Passed through so that a run can compare (e.g. TALLY_QUERY_NICE=0 against the default).
    ...Object.fromEntries(['TALLY_QUERY_NICE', 'TALLY_QUERY_THREADS'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : []))),
  }
  const open = (warm: boolean) => createApp(loadConfig({}, { ...env, TALLY_PERSON_CACHE_WARM: String(warm) }), pino({ level: 'silent' }))
  const seeding = await open(false)
  const [project] = await seeding.services.projects.listProjects()
  const user = await seeding.services.projects.authenticatePersonalKey(env.TALLY_PERSONAL_API_KEY)
  for (const f of benchFlags()) await seeding.services.featureFlags.create(project, user, f as Record<string, unknown>)
  const countries = ['US', 'DE', 'GB', 'FR', 'JP']
  for (let start = 0; start < PERSONS; start += 10_000) {
    const chunk = Array.from({ length: 10_000 }, (_, j) => {
      const i = start + j
      return {
        distinctId: `person-${i}`,
        properties: {
          email: `user${i}@${i % 3 === 0 ? 'acme.com' : 'example.com'}`,
          plan: ['free', 'pro', 'enterprise'][i % 3],
          country: countries[i % 5],
          age: 18 + (i % 60),
          app_version: `1.${i % 8}.${i % 5}`,
          signup: new Date(Date.now() - (i % 90) * 86_400_000).toISOString(),
        },
      }
    })
    await seeding.services.personData.upsertPersons(project.id, chunk)
  }
  const batch = Array.from({ length: EVENTS }, (_, i) => ({ event: 'seed', distinct_id: `person-${i % 50}`, uuid: crypto.randomUUID(), properties: { i } }))
  const res = await seeding.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: project.apiToken, batch } })
  if (res.statusCode !== 200) throw new Error(`seeding events: ${res.statusCode} ${res.body}`)
  const count = async () => Number(((await seeding.services.queries.run(project, { kind: 'HogQLQuery', query: 'SELECT count() FROM events' })).results as number[][])[0]![0])
  while ((await count()) < EVENTS) await new Promise((r) => setTimeout(r, 100))
  await seeding.close()

  let app: Awaited<ReturnType<typeof createApp>> | null = null
  /** (Re)starts Tally on the seeded data; with `warm`, resolves once the person cache is filled. */
  async function restart(warm: boolean) {
    await app?.close()
    app = await open(warm)
    await app.http.listen({ port: 0, host: '127.0.0.1' })
    const warmUp = warm ? await app.personCacheWarmUp : null
    return { port: (app.http.server.address() as { port: number }).port, warmUp }
  }
  const first = await restart(false)
  let cancelHeavy: AbortController | null = null
  /** Starts the four heavy queries (resolves once all four compute) or cancels them. */
  async function heavy(on: boolean) {
    cancelHeavy?.abort()
    cancelHeavy = null
    if (!on) return
    const cancel = (cancelHeavy = new AbortController())
    for (let i = 0; i < 4; i++) void app!.services.queries.run(project, { kind: 'HogQLQuery', query: HEAVY }, { signal: cancel.signal }).catch(() => undefined)
    while (app!.services.queries.running() < 4) await new Promise((r) => setTimeout(r, 20))
  }
  return {
    port: first.port,
    token: project.apiToken,
    restart,
    heavy,
    cacheStats: () => app!.services.personData.stats(),
    cleanup: async () => {
      await app?.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

async function startCeiling() {
  const app = Fastify()
  app.post('/flags/', async (req) => ({ flags: {}, errorsWhileComputingFlags: false, echo: (req.body as { distinct_id?: string }).distinct_id }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { port: (app.server.address() as { port: number }).port, token: 'phc_ceiling', cleanup: () => app.close(), restart: null, heavy: null, cacheStats: null }
}

const started = process.argv[2] === 'ceiling' ? await startCeiling() : await startTally()
process.send!({ type: 'ready', port: started.port, token: started.token })
let profiler: Session | null = null
process.on('message', async (msg: { type: string; warm?: boolean; on?: boolean; file?: string }) => {
  // A V8 CPU profile of one phase (BENCH_PHASE_PROFILE): started and written on request.
  if (msg.type === 'profile') {
    if (msg.file === undefined) {
      profiler = new Session()
      profiler.connect()
      await profiler.post('Profiler.enable')
      await profiler.post('Profiler.setSamplingInterval', { interval: 100 })
      await profiler.post('Profiler.start')
    } else if (profiler) {
      const { profile } = await profiler.post('Profiler.stop')
      await writeFile(msg.file, JSON.stringify(profile))
      profiler.disconnect()
      profiler = null
    }
    process.send!({ type: 'profile' })
  }
  if (msg.type === 'stats') {
    const cpu = process.cpuUsage()
    process.send!({ type: 'stats', cpuMicros: cpu.user + cpu.system, mainCpuMicros: mainThreadCpuMicros(), rss: process.memoryUsage().rss, cache: started.cacheStats?.() ?? null })
  }
  if (msg.type === 'heavy' && started.heavy) {
    await started.heavy(msg.on === true)
    process.send!({ type: 'heavy' })
  }
  if (msg.type === 'restart' && started.restart) process.send!({ type: 'ready', ...(await started.restart(msg.warm === true)) })
  if (msg.type === 'stop') {
    await started.cleanup()
    process.exit(0)
  }
})
