// The scale stack of `npm run bench:ingest -- --stack scale`: the same /batch/ load as the embedded run,
// into one capture process, one worker process and one api process (the readability probe) on PostgreSQL
// (the machine's, a fresh database), a nats-server and a clickhouse-server of the benchmark's own, so
// that NATS's and ClickHouse's CPU are counted apart from Tally's.
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { privateClickHouse } from '../test/helpers/clickhouse.ts'
import { benchNodeArgs, tallyMain, cpuSeconds, rssMb, startServer, stopServer, TALLY_READY, type ServerProcess } from './server-process.ts'

export interface ScaleStackResult {
  acceptedEvents: number
  acceptedSeconds: number
  readableSeconds: number
  /** CPU seconds over the phase, by process. */
  cpu: { capture: number; worker: number; api: number; nats: number; clickhouse: number }
  peakRssMb: { capture: number; worker: number; api: number }
}

export interface ScaleStackOptions {
  token: string
  personal: string
  /** Runs the load against a base URL, returns the events answered 200 and the phase's seconds. */
  load(url: string): Promise<{ events: number; seconds: number }>
  /** Sends a sentinel event to `captureUrl` and resolves once `apiUrl` reads it back. */
  waitReadable(captureUrl: string, apiUrl: string): Promise<void>
}

export async function runScaleStack(o: ScaleStackOptions): Promise<ScaleStackResult> {
  const pgUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  const database = `bench_scale_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: pgUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-bench-scale-'))
  const nats = await startNats(path.join(dir, 'nats'))
  const ch = await privateClickHouse()
  const procs: ServerProcess[] = []
  try {
    const u = new URL(pgUrl)
    u.pathname = `/${database}`
    const env = {
      TALLY_PROJECT_API_KEY: o.token,
      TALLY_PERSONAL_API_KEY: o.personal,
      TALLY_LOG_LEVEL: 'info',
      TALLY_DATABASE_URL: u.toString(),
      TALLY_NATS_URL: nats.url,
      TALLY_CLICKHOUSE_URL: `${ch.url}/bench`,
    }
    // BENCH_PROFILE=dir: each role's V8 profile under dir/scale-<role>/.
    const profileArgs = (role: string) => benchNodeArgs().map((a) => (a.startsWith('--cpu-prof-dir=') ? `${a}/scale-${role}` : a))
    const main = tallyMain()
    const start = (role: string) =>
      startServer([...profileArgs(role), main, 'serve', '--port', '0', '--data-dir', path.join(dir, role)], { env: { ...env, TALLY_ROLE: role }, ready: TALLY_READY }).then((p) => {
        procs.push(p)
        return p
      })
    const api = await start('api')
    const [capture, worker] = [await start('capture'), await start('worker')]
    const chPid = ch.pid()!
    const pids = { capture: capture.pid, worker: worker.pid, api: api.pid, nats: nats.pid, clickhouse: chPid }
    const cpu0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)])) as Record<keyof typeof pids, number>
    const t0 = performance.now()
    const { events, seconds } = await o.load(capture.url)
    await o.waitReadable(capture.url, api.url)
    const readableSeconds = (performance.now() - t0) / 1000
    const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid) - cpu0[k as keyof typeof pids]])) as ScaleStackResult['cpu']
    const peak = (p: ServerProcess) => Math.round(rssMb(p.pid).peak)
    return { acceptedEvents: events, acceptedSeconds: seconds, readableSeconds, cpu, peakRssMb: { capture: peak(capture), worker: peak(worker), api: peak(api) } }
  } finally {
    for (const p of procs.reverse()) await stopServer(p)
    await ch.destroy()
    await nats.stop()
    await admin.query(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined)
    await admin.end()
    await rm(dir, { recursive: true, force: true })
  }
}

/** A nats-server with JetStream on a free loopback port and a store under `dir`. */
async function startNats(dir: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const p = spawn(process.env.NATS_SERVER_PATH ?? '/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', dir], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const port = await new Promise<number>((resolve, reject) => {
    const on = (c: Buffer) => {
      out += c.toString()
      const m = /Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(out)
      if (m && /Server is ready/.test(out)) resolve(Number(m[1]))
    }
    p.stdout!.on('data', on)
    p.stderr!.on('data', on)
    p.once('exit', () => reject(new Error(`nats-server exited: ${out}`)))
  })
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: p.pid!,
    async stop() {
      p.removeAllListeners('exit')
      const exited = new Promise((r) => p.once('exit', r))
      p.kill('SIGTERM')
      await exited
    },
  }
}
