import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { copyDataDir, testEnv } from './test-app.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/**
 * One cell of the kill -9 matrix. `point` is a crash point (src/shared/crash-points.ts) with an
 * optional `:nth`. `phase: 'accept'`: the server is started with the point armed and sent batches
 * until it kills itself. `phase: 'restart'`: a first server accepts batches and is killed on its
 * first worker batch (so everything sits in the queue), then a second start is armed with the point
 * and dies during recovery or redelivery. Either way a last, unarmed start must end with every
 * acknowledged event stored exactly once.
 */
export interface KillScenario {
  point: string
  phase: 'accept' | 'restart'
  /** Extra environment for every start (the broken variant's switch, for instance). */
  env?: Record<string, string>
}

interface Child {
  child: ChildProcess
  /** The address once ready (null if the process died first). */
  ready: Promise<string | null>
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  output: () => string
}

/** A small segment size, so segment rotation and deletion happen within a few requests. */
const BASE_ENV = { TALLY_QUEUE_SEGMENT_BYTES: '8192', TALLY_LOG_LEVEL: 'info', TALLY_PERSON_CACHE_WARM: 'false' }

function startChild(dataDir: string, env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
    env: { ...process.env, ...BASE_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const ready = new Promise<string | null>((resolve) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const m = /Tally ready on (http:\/\/[^\s"]+)/.exec(output)
      if (m) resolve(m[1]!)
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then(() => resolve(null))
  })
  return { child, ready, exited, output: () => output }
}

/**
 * Sends rounds of `parallel` batches of `perRequest` events (known uuids) until the server dies or
 * `maxRounds` pass. Returns the uuids of the requests that got a 200: the acknowledged events.
 */
async function sendUntilDeath(c: Child, url: string, token: string, maxRounds: number, parallel = 4, perRequest = 10): Promise<string[]> {
  const acked: string[] = []
  let dead = false
  void c.exited.then(() => (dead = true))
  for (let round = 0; round < maxRounds && !dead; round++) {
    await Promise.allSettled(
      Array.from({ length: parallel }, async (_, r) => {
        const batch = Array.from({ length: perRequest }, (_, i) => ({
          event: 'kill',
          distinct_id: `user-${r}`,
          uuid: crypto.randomUUID(),
          properties: { round, r, i, pad: 'x'.repeat(64) },
        }))
        const res = await fetch(`${url}/batch/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: token, batch }),
        })
        await res.arrayBuffer()
        if (res.status === 200) acked.push(...batch.map((e) => e.uuid))
      }),
    )
  }
  return acked
}

/** Every stored `kill` event id through the events API (all pages). */
async function storedIds(url: string, personalKey: string): Promise<string[]> {
  const headers = { authorization: `Bearer ${personalKey}` }
  const projects = (await (await fetch(`${url}/api/projects/`, { headers })).json()) as { results: Array<{ id: number }> }
  const ids: string[] = []
  let next: string | null = `${url}/api/projects/${projects.results[0]!.id}/events/?event=kill&limit=1000`
  while (next) {
    const res: Response = await fetch(next, { headers })
    assert.equal(res.status, 200)
    const page = (await res.json()) as { next: string | null; results: Array<{ id: string }> }
    for (const e of page.results) ids.push(e.id)
    next = page.next
  }
  return ids
}

export interface KillOutcome {
  acked: number
  /** Acknowledged events not stored after the final restart. */
  missing: string[]
  /** Stored more than once (rows minus distinct uuids). */
  duplicates: number
}

async function killed(c: Child, what: string): Promise<void> {
  const { signal } = await c.exited
  assert.equal(signal, 'SIGKILL', `${what}: the process ended without being killed at its crash point\n${c.output().slice(-2000)}`)
}

let template: Promise<{ dir: string; keys: { TALLY_PROJECT_API_KEY: string; TALLY_PERSONAL_API_KEY: string } }> | null = null

/**
 * A data dir after a first start and a clean stop, made once per test file: a first start (initdb)
 * costs several seconds, a copy almost nothing. Removed when the process exits.
 */
function templateDataDir() {
  template ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-kill-template-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    const env = testEnv(dir)
    const keys = { TALLY_PROJECT_API_KEY: env.TALLY_PROJECT_API_KEY, TALLY_PERSONAL_API_KEY: env.TALLY_PERSONAL_API_KEY }
    const c = startChild(dir, keys)
    const url = await c.ready
    assert.ok(url, `template start failed:\n${c.output()}`)
    // One round trip: serve installs its SIGTERM handler just after the ready line.
    assert.equal((await fetch(`${url}/_health`)).status, 200)
    c.child.kill('SIGTERM')
    assert.equal((await c.exited).code, 0)
    return { dir, keys }
  })()
  return template
}

const queuedDirs = new Map<string, Promise<{ dir: string; acked: string[] }>>()

/**
 * A data dir whose server was killed on its first worker batch: the acknowledged events are all
 * still in the queue only. Made once per test file (and extra env), copied for each restart cell.
 */
function queuedDataDir(extra: Record<string, string>) {
  const key = JSON.stringify(extra)
  let made = queuedDirs.get(key)
  if (!made) {
    made = (async () => {
      const { dir: templateDir, keys } = await templateDataDir()
      const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-kill-queued-'))
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
      copyDataDir(templateDir, dir)
      const first = startChild(dir, { ...keys, ...extra, TALLY_CRASH_AT: 'worker.batch-received' })
      const url = await first.ready
      assert.ok(url, `server died before it was ready:\n${first.output()}`)
      const acked = await sendUntilDeath(first, url, keys.TALLY_PROJECT_API_KEY, 40)
      await killed(first, 'first worker batch')
      assert.ok(acked.length > 0, 'no request was acknowledged before the first worker batch')
      return { dir, acked }
    })()
    queuedDirs.set(key, made)
  }
  return made
}

/** Runs one scenario on a fresh copy of the template data dir (removed afterwards) and reports what was lost. */
export async function runKillScenario(t: TestContext, s: KillScenario): Promise<KillOutcome> {
  const { dir: templateDir, keys } = await templateDataDir()
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-kill-'))
  t.after(() => rm(dataDir, { recursive: true, force: true }))
  copyDataDir(templateDir, dataDir)
  const extra = s.env ?? {}

  let acked: string[]
  if (s.phase === 'accept') {
    const first = startChild(dataDir, { ...keys, ...extra, TALLY_CRASH_AT: s.point })
    const url = await first.ready
    assert.ok(url, `server died before it was ready:\n${first.output()}`)
    // Rounds take a few ms each and micro-batches linger (TALLY_FLUSH_INTERVAL_MS): enough rounds
    // for several batches, so a point armed for the second one is reached; the crash ends them early.
    acked = await sendUntilDeath(first, url, keys.TALLY_PROJECT_API_KEY, 400)
    if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGTERM')
    await killed(first, `${s.point} (accepting)`)
  } else {
    const queued = await queuedDataDir(extra)
    acked = queued.acked
    await rm(dataDir, { recursive: true, force: true })
    copyDataDir(queued.dir, dataDir)
    const second = startChild(dataDir, { ...keys, ...extra, TALLY_CRASH_AT: s.point })
    const timer = setTimeout(() => second.child.kill('SIGTERM'), 60_000)
    await killed(second, `${s.point} (restarting)`).finally(() => clearTimeout(timer))
  }

  const last = startChild(dataDir, { ...keys, ...extra })
  try {
    const url = await last.ready
    assert.ok(url, `the clean restart failed:\n${last.output()}`)
    const want = new Set(acked)
    let ids: string[] = []
    // Until every acknowledged event is readable (bounded: a lost one never shows up).
    for (let i = 0; i < 100; i++) {
      ids = await storedIds(url, keys.TALLY_PERSONAL_API_KEY)
      const have = new Set(ids)
      if ([...want].every((u) => have.has(u))) break
      await new Promise((r) => setTimeout(r, 100))
    }
    const have = new Set(ids)
    return { acked: acked.length, missing: acked.filter((u) => !have.has(u)), duplicates: ids.length - have.size }
  } finally {
    // Stopped before the data dir is removed.
    if (last.child.exitCode === null && last.child.signalCode === null) last.child.kill('SIGKILL')
    await last.exited
  }
}
