import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { buildTestApp, type TestApp } from '../helpers/test-app.ts'
import { waitForEvents } from '../helpers/capture-helpers.ts'
import { eventually } from '../helpers/eventually.ts'
import { someEvents, switchableStore } from '../helpers/ingestion-outage.ts'

const FAST_RETRY = { TALLY_INGEST_RETRY_MIN_MS: '20', TALLY_INGEST_RETRY_MAX_MS: '100', TALLY_PERSON_CACHE_WARM: 'false' }
const DISK_FULL = () => new Error('IO Error: Could not write file "events.duckdb.wal": No space left on device')

/** The queue's backlog figures as `/_metrics` shows them. */
async function backlog(app: TestApp): Promise<{ events: number; bytes: number; lag: number }> {
  const res = await app.http.inject({ method: 'GET', url: '/_metrics' })
  assert.equal(res.statusCode, 200)
  const value = (name: string) => {
    const line = res.body.split('\n').find((l) => l.startsWith(`${name} `))
    assert.ok(line, `${name} is exported`)
    return Number(line.slice(name.length + 1))
  }
  return { events: value('tally_queue_backlog_events'), bytes: value('tally_queue_backlog_bytes'), lag: value('tally_ingestion_lag_seconds') }
}

async function capture(app: TestApp, batch: unknown[]): Promise<void> {
  const res = await app.http.inject({ method: 'POST', url: '/batch/', payload: { api_key: app.projectKey, batch } })
  assert.equal(res.statusCode, 200)
}

test('queue metrics: events the worker cannot store show as backlog and lag, exactly across a restart, and go back to 0 once stored', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-queue-metrics-'))
  let failing = true
  const store = switchableStore(() => (failing ? DISK_FULL() : null))
  const first = await buildTestApp(t, { dataDir, env: FAST_RETRY, wrapEventStore: store.wrap })
  assert.deepEqual(await backlog(first), { events: 0, bytes: 0, lag: 0 })

  const sent = [...someEvents('lagging', 30), ...someEvents('lagging', 12)]
  await capture(first, sent.slice(0, 30))
  await capture(first, sent.slice(30))
  // The worker has tried (and failed) at least once: the events are still there, and getting older.
  await eventually(async () => store.calls.length >= 2)
  const stuck = await eventually(async () => {
    const b = await backlog(first)
    return b.lag > 0 ? b : null
  })
  assert.equal(stuck.events, 42)
  assert.ok(stuck.bytes > 42 * 50, `bytes: ${stuck.bytes}`)

  // A restart counts them again from the log (not from counters since start).
  await first.close()
  const env = { ...FAST_RETRY, TALLY_PROJECT_API_KEY: first.projectKey, TALLY_PERSONAL_API_KEY: first.personalKey }
  const again = await buildTestApp(t, { dataDir, env, wrapEventStore: store.wrap })
  // After hooks run in the order they were added: both apps are closed by then.
  t.after(() => rm(dataDir, { recursive: true, force: true }))
  const reopened = await backlog(again)
  assert.equal(reopened.events, 42)
  assert.equal(reopened.bytes, stuck.bytes)
  assert.ok(reopened.lag > 0, `lag after restart: ${reopened.lag}`)

  await capture(again, someEvents('lagging', 5))
  await eventually(async () => (await backlog(again)).events === 47)

  failing = false
  await waitForEvents(again, 47, { event: 'lagging' })
  const drained = await eventually(async () => {
    const b = await backlog(again)
    return b.events === 0 ? b : null
  })
  assert.deepEqual(drained, { events: 0, bytes: 0, lag: 0 })
})
