// What the benchmarks share about the server they measure: starting it as a child process and waiting
// for the line that gives its address, stopping it, and reading its CPU time and memory from /proc
// (every thread: DuckDB's, V8's helpers and libuv's pool count too).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createWriteStream, readFileSync } from 'node:fs'

export interface ServerProcess {
  child: ChildProcess
  pid: number
  url: string
}

/**
 * The server's entry as users run it: the built dist/main.js (plain node), built first when it is not
 * the build of the current src/. Through tsx the figures would count its transform and esbuild's
 * keep-names wrapper on every closure the hot paths create (profiled: 0.3 CPU s of the notify step's
 * 1.5 s over 28,000 events was `__name`), neither of which production runs.
 */
export function tallyMain(): string {
  const build = spawnSync(process.execPath, ['scripts/build-dist.mjs', '--if-stale'], { stdio: 'inherit' })
  if (build.status !== 0) throw new Error('building dist/ failed')
  return 'dist/main.js'
}

/**
 * Node flags for the measured server, from the environment: BENCH_PROFILE=dir writes a V8 CPU
 * profile there, BENCH_NODE_ARGS adds flags of its own (e.g. --trace-gc).
 */
export function benchNodeArgs(): string[] {
  return [
    ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
    ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ]
}

/** The line Tally logs (at info) once it listens. */
export const TALLY_READY = /Tally ready on (http:\/\/[^\s"]+)/

/**
 * Runs `node <args>` and resolves once its output matches `ready` (the first group is the URL).
 * Rejects with the end of its output if it exits first. BENCH_SERVER_LOG names a file for the
 * output of servers started with `log: true`.
 */
export function startServer(args: string[], opts: { env?: Record<string, string>; ready: RegExp; log?: boolean }): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  if (opts.log && process.env.BENCH_SERVER_LOG) {
    const log = createWriteStream(process.env.BENCH_SERVER_LOG)
    child.stdout!.pipe(log)
    child.stderr!.pipe(log)
  }
  let out = ''
  return new Promise((resolve, reject) => {
    let started = false
    const onData = (c: Buffer) => {
      if (started) return // keeps draining the pipes without holding the output
      out = (out + c.toString()).slice(-65536)
      const m = opts.ready.exec(out)
      if (m) {
        started = true
        resolve({ child, pid: child.pid!, url: m[1]! })
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${out.slice(-2000)}`)))
  })
}

/** SIGTERM, and resolves once the process has exited (its files closed). */
export async function stopServer(server: ServerProcess): Promise<void> {
  server.child.removeAllListeners('exit')
  if (server.child.exitCode !== null || server.child.signalCode !== null) return
  const exited = new Promise((r) => server.child.once('exit', r))
  server.child.kill('SIGTERM')
  await exited
}

/** CPU seconds (user + system, all threads) the process has used so far. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The process's resident memory now and at its highest so far, in MB. */
export function rssMb(pid: number): { rss: number; peak: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8')
  return { rss: Number(/VmRSS:\s+(\d+)/.exec(s)![1]) / 1024, peak: Number(/VmHWM:\s+(\d+)/.exec(s)![1]) / 1024 }
}

/**
 * The values of `/_metrics` samples, by the caller's names: `want` maps each name to a series with
 * its exact labels (e.g. `tally_store_memory_bytes{store="duckdb"}`). Absent series are left out.
 */
export async function readMetrics<K extends string>(url: string, authorization: string, want: Record<K, string>): Promise<Partial<Record<K, number>>> {
  const text = await (await fetch(`${url}/_metrics`, { headers: { authorization } })).text()
  const out: Partial<Record<K, number>> = {}
  for (const line of text.split('\n')) {
    for (const [k, series] of Object.entries(want) as Array<[K, string]>) if (line.startsWith(`${series} `)) out[k] = Number(line.slice(series.length + 1))
  }
  return out
}
