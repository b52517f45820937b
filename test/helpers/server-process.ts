import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

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
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--port', '0', '--data-dir', dataDir], {
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
