import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
/** The built entry point: the cluster tests start built code (`npm run test:cluster` builds it first). */
export const DIST_MAIN = path.join(ROOT, 'dist', 'main.js')
export const hasDist = existsSync(DIST_MAIN)

/** One `tally serve --role ...` process of a cluster test, on a fixed port, restartable. */
export interface TallyProcess {
  readonly role: string
  readonly url: string
  /** Starts it (resolves once it prints that it is ready); `extraEnv` for this start only. */
  start(extraEnv?: Record<string, string>): Promise<void>
  /** Resolves when the running process exits (at once when none runs). */
  exited(): Promise<void>
  /** `kill -9`: no shutdown at all. */
  kill9(): Promise<void>
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>
  /** The last lines it printed (for a failure message). */
  output(): string
  /** Peak resident memory of the running process in MB (VmHWM), or null. */
  peakRssMb(): number | null
}

/** A process of the built Tally (`node dist/main.js serve`) with TALLY_ROLE=`role`, on `port` and `dataDir`. */
export function tallyProcess(role: string, port: number, dataDir: string, env: Record<string, string>): TallyProcess {
  let child: ChildProcess | null = null
  let exited: Promise<void> = Promise.resolve()
  let out = ''
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString()).slice(-20_000)
  }
  return {
    role,
    url: `http://127.0.0.1:${port}`,
    async start(extraEnv = {}) {
      const p = spawn(process.execPath, [DIST_MAIN, 'serve', '--port', String(port), '--data-dir', dataDir], {
        cwd: ROOT,
        env: { ...process.env, TALLY_LOG_LEVEL: 'info', TALLY_LOG_FORMAT: 'json', ...env, ...extraEnv, TALLY_ROLE: role },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      child = p
      exited = new Promise((resolve) => p.once('exit', () => resolve()))
      await new Promise<void>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          keep(chunk)
          if (out.includes(`Tally ready on http://127.0.0.1:${port}`)) {
            p.stdout!.off('data', onData)
            p.stderr!.off('data', onData)
            p.stdout!.on('data', keep)
            p.stderr!.on('data', keep)
            resolve()
          }
        }
        p.stdout!.on('data', onData)
        p.stderr!.on('data', onData)
        void exited.then(() => reject(new Error(`${role} on ${port} exited before it was ready:\n${out.slice(-4000)}`)))
      })
    },
    exited: () => exited,
    async kill9() {
      child?.kill('SIGKILL')
      await exited
      child = null
    },
    async stop() {
      if (!child || child.exitCode !== null) return
      const p = child
      p.kill('SIGTERM')
      const timer = setTimeout(() => p.kill('SIGKILL'), 20_000)
      await exited
      clearTimeout(timer)
      child = null
    },
    output: () => out,
    peakRssMb() {
      if (!child?.pid) return null
      try {
        const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]
        return kb ? Math.round(Number(kb) / 1024) : null
      } catch {
        return null
      }
    },
  }
}
