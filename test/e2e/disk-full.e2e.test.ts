import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { capturedLogger, readDeadLetters, someEvents } from '../helpers/ingestion-outage.ts'

const TMPFS_MB = 32
const FILLER_MB = 16

/**
 * A data dir whose queue and events directories live on a small tmpfs of their own (the metadata
 * stays on the normal disk). Needs root, as here and in CI: a failed mount fails the test.
 */
async function smallDiskDataDir(t: import('node:test').TestContext): Promise<{ dataDir: string; mount: string }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-diskfull-'))
  const mount = await mkdtemp(path.join(os.tmpdir(), 'tally-tmpfs-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MB}m`, 'tmpfs', mount])
  t.after(async () => {
    execFileSync('umount', ['-l', mount])
    await rm(mount, { recursive: true, force: true })
    await rm(dataDir, { recursive: true, force: true })
  })
  for (const d of ['queue', 'events']) {
    await mkdir(path.join(mount, d))
    await symlink(path.join(mount, d), path.join(dataDir, d))
  }
  return { dataDir, mount }
}

/** One /batch/ of 100 events with ~1 KB of properties each; the uuids when it answered 200. */
async function send(app: TestApp, statuses: number[]): Promise<{ status: number; uuids: string[]; retryAfter: unknown; body: unknown }> {
  const batch = someEvents('diskfull', 100).map((e) => ({ ...e, properties: { ...e.properties, pad: 'x'.repeat(1000) } }))
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  statuses.push(res.statusCode)
  return { status: res.statusCode, uuids: batch.map((e) => e.uuid), retryAfter: res.headers['retry-after'], body: res.json() }
}

test('a full disk makes capture answer 503 with Retry-After; once space is back every acknowledged event is stored exactly once and none is dead-lettered', async (t) => {
  const { dataDir, mount } = await smallDiskDataDir(t)
  const filler = path.join(mount, 'filler')
  await writeFile(filler, Buffer.alloc(FILLER_MB * 1024 * 1024, 1))
  const { logger, lines } = capturedLogger()
  const app = await buildTestApp(t, {
    dataDir,
    logger,
    env: {
      TALLY_INGEST_RETRY_MIN_MS: '20',
      TALLY_INGEST_RETRY_MAX_MS: '300',
      TALLY_QUEUE_SEGMENT_BYTES: String(1024 * 1024),
      TALLY_MAX_BATCH_EVENTS: '1000',
      TALLY_PERSON_CACHE_WARM: 'false',
    },
  })
  t.after(() => app.close())
  const statuses: number[] = []
  const acknowledged: string[] = []

  // Fill the disk: the queue and DuckDB's WAL share what the filler left.
  let refused: Awaited<ReturnType<typeof send>> | null = null
  for (let i = 0; i < 400 && !refused; i++) {
    const r = await send(app, statuses)
    if (r.status === 200) acknowledged.push(...r.uuids)
    else refused = r
  }
  assert.ok(refused, `capture never refused (${acknowledged.length} events accepted)`)
  assert.equal(refused.status, 503)
  assert.equal(refused.retryAfter, '5')
  assert.deepEqual(refused.body, { type: 'server_error', code: 'service_unavailable', detail: 'Events could not be stored right now; retry later.', attr: null })
  const blocked = await app.http.inject({ method: 'GET', url: '/_ready' })
  assert.equal(blocked.statusCode, 503)
  assert.equal(blocked.json().ingestion.blocked, true)
  assert.match(JSON.stringify(blocked.json().ingestion.components), /ENOSPC|No space left/)
  for (let i = 0; i < 5; i++) {
    const r = await send(app, statuses)
    if (r.status === 200) acknowledged.push(...r.uuids)
  }
  assert.ok(statuses.every((s) => s === 200 || s === 503), `only 200 or 503: ${[...new Set(statuses)]}`)

  // Space comes back: /_ready sees it without any new request (the queue probes the disk).
  await rm(filler)
  await eventually(async () => (await app.http.inject({ method: 'GET', url: '/_ready' })).statusCode === 200, 200, 50)
  let acceptedAfter = 0
  for (let i = 0; i < 30; i++) {
    const r = await send(app, statuses)
    if (r.status === 200) {
      acknowledged.push(...r.uuids)
      acceptedAfter++
    }
  }
  assert.ok(acceptedAfter > 0, 'capture accepts again once space is back')

  const stored = await waitForEvents(app, acknowledged.length, { event: 'diskfull' })
  assert.equal(stored.length, acknowledged.length, 'each acknowledged event stored once, nothing else')
  assert.deepEqual(new Set(stored.map((e) => e.id)), new Set(acknowledged))
  t.diagnostic(`acknowledged ${acknowledged.length} events, ${statuses.filter((s) => s === 503).length} requests refused; log: ${lines.filter((l) => l.module === 'queue' || l.module === 'ingestion').map((l) => `${l.module}: ${l.msg}`).join(' | ')}`)
  const queueLines = lines.filter((l) => l.module === 'queue').map((l) => String(l.msg))
  assert.ok(queueLines.filter((m) => m.startsWith('event queue cannot write')).length >= 1)
  assert.ok(queueLines.filter((m) => m.startsWith('event queue cannot write')).length <= 3, `a line per change of state, not per request: ${queueLines.join(' | ')}`)
  await app.close()
  assert.deepEqual(await readDeadLetters(dataDir), [])
})
