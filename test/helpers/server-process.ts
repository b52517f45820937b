import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import type { TestContext } from 'node:test'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { tallyArgs } from './tally-command.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export interface ServerProcess {
  child: ChildProcess
  url: string
  /** Resolves once the process has exited. */
  exited: Promise<number | null>
}

/**
 * Starts `tally serve --port 0` as a child process on `dataDir` and resolves with the address it
 * prints once ready. The caller stops it (SIGTERM, or SIGKILL to simulate a crash).
 */
export async function startServerProcess(dataDir: string, env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, tallyArgs('serve', '--port', '0', '--data-dir', dataDir), {
    cwd: ROOT,
    env: { ...process.env, TALLY_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const m = /Tally ready on (http:\/\/[^\s"]+)/.exec(output)
      if (m) resolve(m[1]!)
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then((code) => reject(new Error(`server exited (${code}) before it was ready:\n${output}`)))
  })
  return { child, url, exited }
}

/** A temp dir removed when the test ends. */
export async function tempDir(t: TestContext, prefix = 'tally-proc-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** `tally serve` with TALLY_ROLE=`role` on a data dir of its own; stopped (SIGTERM) when the test ends. */
export async function startRoleProcess(t: TestContext, role: string, env: Record<string, string>): Promise<ServerProcess> {
  const p = await startServerProcess(await tempDir(t), { ...env, TALLY_ROLE: role })
  t.after(async () => {
    p.child.kill('SIGTERM')
    await p.exited
  })
  return p
}
