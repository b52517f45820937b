import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { copyDataDir, testEnv } from './test-app.ts'
import { tallyArgs } from './tally-command.ts'

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
  /**
   * Requests also merge stored persons: each sends an event of a new anonymous id, and from round
   * MERGE_LAG on an `$identify` of its user with the anonymous id of MERGE_LAG rounds before (a
   * person stored by an earlier micro-batch). The outcome then says which acknowledged merges the
   * final start does not show, in the persons API and in the events' person ids.
   */
  merges?: boolean
}

/** Rounds between an anonymous id's first event and its `$identify`: several micro-batches apart. */
const MERGE_LAG = 100

export interface Child {
  child: ChildProcess
  /** The address once ready (null if the process died first). */
  ready: Promise<string | null>
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  output: () => string
}

/** A small segment size, so segment rotation and deletion happen within a few requests. */
const BASE_ENV = { TALLY_QUEUE_SEGMENT_BYTES: '8192', TALLY_LOG_LEVEL: 'info', TALLY_PERSON_CACHE_WARM: 'false' }

export function startChild(dataDir: string, env: Record<string, string>): Child {
  const child = spawn(process.execPath, tallyArgs('serve', '--port', '0', '--data-dir', dataDir), {
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

interface Merge {
  user: string
  anon: string
}

/**
 * Sends rounds of `parallel` batches of `perRequest` events (known uuids) until the server dies or
 * `maxRounds` pass. Returns the uuids of the requests that got a 200 (the acknowledged events) and,
 * with `merges`, the merges they asked for.
 */
async function sendUntilDeath(
  c: Child, url: string, token: string, maxRounds: number, merges = false, parallel = 4, perRequest = 10,
): Promise<{ acked: string[]; merged: Merge[] }> {
  const acked: string[] = []
  const merged: Merge[] = []
  let dead = false
  void c.exited.then(() => (dead = true))
  for (let round = 0; round < maxRounds && !dead; round++) {
    await Promise.allSettled(
      Array.from({ length: parallel }, async (_, r) => {
        const batch: Array<{ event: string; distinct_id: string; uuid: string; properties: Record<string, unknown> }> = Array.from({ length: perRequest }, (_, i) => ({
          event: 'kill',
          distinct_id: `user-${r}`,
          uuid: crypto.randomUUID(),
          properties: { round, r, i, pad: 'x'.repeat(64) },
        }))
        let merge: Merge | null = null
        if (merges) {
          batch[0]!.distinct_id = `anon-${round}-${r}`
          if (round >= MERGE_LAG) {
            merge = { user: `user-${r}`, anon: `anon-${round - MERGE_LAG}-${r}` }
            batch[1] = { event: '$identify', distinct_id: merge.user, uuid: crypto.randomUUID(), properties: { $anon_distinct_id: merge.anon } }
          }
        }
        const res = await fetch(`${url}/batch/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: token, batch }),
        })
        await res.arrayBuffer()
        if (res.status === 200) {
          acked.push(...batch.map((e) => e.uuid))
          if (merge) merged.push(merge)
        }
      }),
    )
  }
  return { acked, merged }
}

async function projectId(url: string, headers: Record<string, string>): Promise<number> {
  const projects = (await (await fetch(`${url}/api/projects/`, { headers })).json()) as { results: Array<{ id: number }> }
  return projects.results[0]!.id
}

/** Every stored event id through the events API (all pages). */
async function storedIds(url: string, personalKey: string): Promise<string[]> {
  const headers = { authorization: `Bearer ${personalKey}` }
  const ids: string[] = []
  let next: string | null = `${url}/api/projects/${await projectId(url, headers)}/events/?limit=1000`
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
  /** With `merges`: how many acknowledged merges were checked. */
  merges: number
  /** With `merges`: what the final start shows wrong about them, a line each. */
  unmerged: string[]
}

/**
 * What the server shows wrong about acknowledged merges: the anonymous id not among its user's
 * distinct ids (persons API), or an event of either not attributed to the user's person (the
 * events' `person_id` through HogQL, which resolves merged-away persons through the overrides).
 */
async function checkMerges(url: string, personalKey: string, merges: Merge[]): Promise<string[]> {
  const headers = { authorization: `Bearer ${personalKey}`, 'content-type': 'application/json' }
  const base = `${url}/api/projects/${await projectId(url, headers)}`
  const problems: string[] = []
  const personOf = new Map<string, string>()
  for (const user of new Set(merges.map((m) => m.user))) {
    const res = await fetch(`${base}/persons/?distinct_id=${user}`, { headers })
    const person = ((await res.json()) as { results: Array<{ uuid: string; distinct_ids: string[] }> }).results[0]
    if (!person) problems.push(`${user}: no person`)
    else personOf.set(user, person.uuid)
  }
  for (const m of merges) {
    const res = await fetch(`${base}/persons/?distinct_id=${m.anon}`, { headers })
    const person = ((await res.json()) as { results: Array<{ uuid: string }> }).results[0]
    if (person?.uuid !== personOf.get(m.user)) problems.push(`${m.anon}: person ${person?.uuid ?? 'none'}, not ${m.user}'s ${personOf.get(m.user)}`)
  }
  const res = await fetch(`${base}/query/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query: { kind: 'HogQLQuery', query: `SELECT distinct_id, toString(person_id) FROM events GROUP BY distinct_id, person_id LIMIT 100000` } }),
  })
  assert.equal(res.status, 200, await res.clone().text())
  const seen = new Map<string, string[]>()
  for (const [distinctId, personId] of ((await res.json()) as { results: Array<[string, string]> }).results) {
    seen.set(distinctId, [...(seen.get(distinctId) ?? []), personId])
  }
  const attributed = new Map<string, string>(merges.map((m) => [m.anon, m.user]))
  for (const m of merges) attributed.set(m.user, m.user)
  for (const [distinctId, user] of attributed) {
    const ids = seen.get(distinctId) ?? []
    if (ids.length !== 1 || ids[0] !== personOf.get(user)) problems.push(`events of ${distinctId}: persons ${ids.join(', ') || 'none'}, not ${user}'s ${personOf.get(user)}`)
  }
  return problems
}

export async function killed(c: Child, what: string): Promise<void> {
  const { signal } = await c.exited
  assert.equal(signal, 'SIGKILL', `${what}: the process ended without being killed at its crash point\n${c.output().slice(-2000)}`)
}

let template: Promise<{ dir: string; keys: { TALLY_PROJECT_API_KEY: string; TALLY_PERSONAL_API_KEY: string } }> | null = null

/**
 * A data dir after a first start and a clean stop, made once per test file: a first start (initdb)
 * costs several seconds, a copy almost nothing. Removed when the process exits.
 */
export function templateDataDir() {
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
      const { acked } = await sendUntilDeath(first, url, keys.TALLY_PROJECT_API_KEY, 40)
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
  let merged: Merge[] = []
  if (s.phase === 'accept') {
    const first = startChild(dataDir, { ...keys, ...extra, TALLY_CRASH_AT: s.point })
    const url = await first.ready
    assert.ok(url, `server died before it was ready:\n${first.output()}`)
    // Rounds take a few ms each and micro-batches linger (TALLY_FLUSH_INTERVAL_MS): enough rounds
    // for several batches, so a point armed for the second one is reached; the crash ends them early.
    // A merge point needs a batch after the one that stored the anonymous persons: more rounds, in
    // case a fast machine sends the first 400 within one linger.
    const rounds = s.merges ? 2000 : 400
    ;({ acked, merged } = await sendUntilDeath(first, url, keys.TALLY_PROJECT_API_KEY, rounds, s.merges))
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
    const unmerged = merged.length > 0 ? await checkMerges(url, keys.TALLY_PERSONAL_API_KEY, merged) : []
    return { acked: acked.length, missing: acked.filter((u) => !have.has(u)), duplicates: ids.length - have.size, merges: merged.length, unmerged }
  } finally {
    // Stopped before the data dir is removed.
    if (last.child.exitCode === null && last.child.signalCode === null) last.child.kill('SIGKILL')
    await last.exited
  }
}
