import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test, type TestContext } from 'node:test'
import { gzipSync } from 'node:zlib'
import { copyDataDir } from '../helpers/test-app.ts'
import { killed, startChild, templateDataDir, type Child } from '../helpers/kill-matrix.ts'
import { aSnapshotBatch, type RrwebEventJson } from '../helpers/replay.ts'

// kill -9 while /s/ writes: a server armed at a crash point (or killed from outside) dies under
// parallel recording uploads; after an unarmed restart every snapshot whose request got a 200 is
// served by the snapshots API, exactly once.
const SESSIONS = ['k-a', 'k-b', 'k-c']
const CELLS = [
  'replay.block-written:5', // block bytes written, not fsync'd: the torn block must stay unreferenced
  'replay.block-written:12',
  'replay.before-publish:7', // block durable, its summary not queued: not acknowledged either
  'queue.flush.before-write:4', // the summary not yet written: the request must not get its 200
  'queue.flush.after-datasync:4', // summary durable, the 200 not yet sent
  'worker.before-ack:2', // metadata written, queue not acknowledged: redelivered, stored once
  'external', // SIGKILL from outside after some acknowledgements
]

/** One request's snapshots: two rrweb events marked with a unique id in `data.mark`. */
function snapshotBody(token: string, n: number): { mark: string; session: string; body: Buffer } {
  const mark = `m${n}-${crypto.randomUUID()}`
  const session = SESSIONS[n % SESSIONS.length]!
  const at = Date.now() - 60_000 + n
  const rrweb: RrwebEventJson[] = [
    { type: 3, timestamp: at, data: { source: 2, type: 2, id: 1, x: 1, y: 1, mark } },
    { type: 3, timestamp: at + 1, data: { source: 1, positions: [], mark } },
  ]
  return { mark, session, body: gzipSync(Buffer.from(JSON.stringify(aSnapshotBatch(token, session, rrweb)))) }
}

/** Sends rounds of parallel `/s/` requests until the server dies (or `killAfter` acks, then SIGKILL). */
async function sendUntilDeath(c: Child, url: string, token: string, killAfter: number | null): Promise<string[]> {
  const acked: string[] = []
  let n = 0
  for (let round = 0; round < 300; round++) {
    if (c.child.exitCode !== null || c.child.signalCode !== null) break
    if (killAfter !== null && acked.length >= killAfter) {
      c.child.kill('SIGKILL')
      break
    }
    const reqs = Array.from({ length: 4 }, () => snapshotBody(token, n++))
    const answers = await Promise.all(
      reqs.map((r) => fetch(`${url}/s/`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: new Uint8Array(r.body) }).then((res) => res.status, () => 0)),
    )
    answers.forEach((status, i) => status === 200 && acked.push(reqs[i]!.mark))
  }
  return acked
}

/** Every `data.mark` the snapshots API serves for the test sessions (with repeats). */
async function servedMarks(url: string, personalKey: string): Promise<string[]> {
  const headers = { authorization: `Bearer ${personalKey}` }
  const base = `${url}/api/projects/@current/session_recordings`
  const marks: string[] = []
  for (const s of SESSIONS) {
    const res = await fetch(`${base}/${s}/snapshots/`, { headers })
    if (res.status === 404) continue
    const { sources } = (await res.json()) as { sources: unknown[] }
    for (let i = 0; i < sources.length; i += 20) {
      const text = await (await fetch(`${base}/${s}/snapshots/?source=blob_v2&start_blob_key=${i}&end_blob_key=${Math.min(sources.length, i + 20) - 1}`, { headers })).text()
      for (const line of text.split('\n')) if (line) marks.push((JSON.parse(line) as [string, { data: { mark: string } }])[1].data.mark)
    }
  }
  return marks
}

async function runCell(t: TestContext, cell: string): Promise<{ acked: number; missing: string[]; duplicates: number }> {
  const { dir: templateDir, keys } = await templateDataDir()
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-replay-kill-'))
  t.after(() => rm(dataDir, { recursive: true, force: true }))
  copyDataDir(templateDir, dataDir)
  const first = startChild(dataDir, { ...keys, ...(cell === 'external' ? {} : { TALLY_CRASH_AT: cell }) })
  const url = await first.ready
  assert.ok(url, `server died before it was ready:\n${first.output()}`)
  const acked = await sendUntilDeath(first, url, keys.TALLY_PROJECT_API_KEY, cell === 'external' ? 40 : null)
  await killed(first, cell)
  const last = startChild(dataDir, keys)
  try {
    const again = await last.ready
    assert.ok(again, `the clean restart failed:\n${last.output()}`)
    let marks: string[] = []
    for (let i = 0; i < 100; i++) {
      marks = await servedMarks(again, keys.TALLY_PERSONAL_API_KEY)
      if (acked.every((m) => marks.includes(m))) break
      await new Promise((r) => setTimeout(r, 100))
    }
    // Each request's mark is on its two events: served once means seen twice.
    const counts = new Map<string, number>()
    for (const m of marks) counts.set(m, (counts.get(m) ?? 0) + 1)
    return { acked: acked.length, missing: acked.filter((m) => !counts.has(m)), duplicates: [...counts.values()].filter((c) => c !== 2).length }
  } finally {
    last.child.kill('SIGTERM')
    await last.exited
  }
}

for (const cell of CELLS) {
  test(`kill -9 at ${cell} during /s/ writes: every acknowledged snapshot is served once after restart`, { timeout: 120_000 }, async (t) => {
    const r = await runCell(t, cell)
    assert.ok(r.acked > 0, 'no request was acknowledged before the kill')
    assert.deepEqual(r.missing, [], `${r.missing.length} of ${r.acked} acknowledged snapshot batches lost`)
    assert.equal(r.duplicates, 0)
  })
}
