import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { TestContext } from 'node:test'
import { connect } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'

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
export async function startOwnNatsServer(t: TestContext, opts: { config?: string } = {}): Promise<OwnNatsServer> {
  const storeDir = await mkdtemp(path.join(os.tmpdir(), 'tally-nats-'))
  // Settings without a command-line flag (e.g. `max_payload: 65536`) go in a config file; the flags win over it.
  const configArgs: string[] = []
  if (opts.config) {
    const file = path.join(storeDir, 'nats.conf')
    await writeFile(file, opts.config)
    configArgs.push('-c', file)
  }
  let port = -1
  let child: ChildProcess | null = null
  let exited: Promise<void> = Promise.resolve()
  const start = async () => {
    const proc = spawn(NATS_SERVER, [...configArgs, '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: ['ignore', 'pipe', 'pipe'] })
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

/** The shared JetStream server the tests may use (CI sets it; `.ci/run` starts one when missing). */
export const TEST_NATS_URL = process.env.TEST_NATS_URL ?? null

if (!TEST_NATS_URL) console.log('# tests on the NATS queue are skipped: set TEST_NATS_URL (e.g. nats://127.0.0.1:4222, a server with -js)')

/**
 * Env putting a test app's event queue on NATS (`url`, else TEST_NATS_URL) in a stream of its own,
 * deleted when the test ends; null when there is no NATS to use.
 */
export function natsQueueEnv(t: TestContext, url: string | null = TEST_NATS_URL): Record<string, string> | null {
  if (!url) return null
  const stream = `T${process.pid}_${Date.now()}_${++streams}`
  t.after(async () => {
    const nc = await connect({ servers: url.split(','), maxReconnectAttempts: 0 }).catch(() => null)
    if (!nc) return
    const jsm = await jetstreamManager(nc)
    await jsm.streams.delete(stream).catch(() => undefined)
    await jsm.streams.delete(`${stream}_RECORDINGS`).catch(() => undefined)
    await nc.close()
  })
  return { TALLY_NATS_URL: url, TALLY_NATS_STREAM: stream, TALLY_NATS_ACK_WAIT_MS: '2000' }
}
let streams = 0
