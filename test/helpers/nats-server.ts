import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { TestContext } from 'node:test'

export const NATS_SERVER = process.env.NATS_SERVER_PATH ?? '/usr/sbin/nats-server'
export const hasNatsServer = existsSync(NATS_SERVER)

/** A nats-server with JetStream of the test's own, on a random loopback port, with a temp store dir. */
export interface OwnNatsServer {
  url: string
  /** SIGTERM, waits for the exit (the store dir stays). */
  stop(): Promise<void>
  /** Starts it again on the same port and store dir. */
  start(): Promise<void>
}

/**
 * Starts a private nats-server (never the machine's shared one, which other tests use), stopped and
 * its store removed when the test ends. The first start takes a random port (`-p -1`); restarts reuse it.
 */
export async function startOwnNatsServer(t: TestContext): Promise<OwnNatsServer> {
  const storeDir = await mkdtemp(path.join(os.tmpdir(), 'tally-nats-'))
  let port = -1
  let child: ChildProcess | null = null
  let exited: Promise<void> = Promise.resolve()
  const start = async () => {
    const proc = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: ['ignore', 'pipe', 'pipe'] })
    child = proc
    exited = new Promise((resolve) => proc.once('exit', () => resolve()))
    let output = ''
    port = await new Promise<number>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        const m = /Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(output)
        if (m && /Server is ready/.test(output)) resolve(Number(m[1]))
      }
      proc.stdout!.on('data', onData)
      proc.stderr!.on('data', onData)
      void exited.then(() => reject(new Error(`nats-server exited before it was ready:\n${output}`)))
    })
  }
  const stop = async () => {
    child?.kill('SIGTERM')
    await exited
    child = null
  }
  await start()
  t.after(async () => {
    await stop()
    await rm(storeDir, { recursive: true, force: true })
  })
  return {
    get url() {
      return `nats://127.0.0.1:${port}`
    },
    stop,
    start,
  }
}
