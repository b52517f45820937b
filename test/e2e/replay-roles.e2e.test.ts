import assert from 'node:assert/strict'
import { test } from 'node:test'
import { gzipSync } from 'node:zlib'
import { connect } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'
import { startServerProcess, tempDir, type ServerProcess } from '../helpers/server-process.ts'
import { testEnv } from '../helpers/test-app.ts'
import { createTestDatabase, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'
import { natsQueueEnv, TEST_NATS_URL } from '../helpers/nats-server.ts'
import { aRecording, aSnapshotBatch } from '../helpers/replay.ts'
import { eventually } from '../helpers/eventually.ts'

/** Messages of the recordings stream no worker has acknowledged yet (pending + in flight). */
async function recordingBacklog(url: string, stream: string): Promise<number> {
  const nc = await connect({ servers: url.split(',') })
  try {
    const jsm = await jetstreamManager(nc)
    const ci = await jsm.consumers.info(`${stream}_RECORDINGS`, 'tally-worker')
    return ci.num_pending + ci.num_ack_pending
  } finally {
    await nc.close()
  }
}

async function stop(p: ServerProcess) {
  p.child.kill('SIGTERM')
  await p.exited
}

test('on PostgreSQL + NATS, /s/ on a capture process queues the block summary on JetStream, only the worker role writes the recording, and an api process on another data dir plays it', { skip: (!TEST_POSTGRES_URL || !TEST_NATS_URL) && 'needs TEST_POSTGRES_URL and TEST_NATS_URL', timeout: 240_000 }, async (t) => {
  const nats = natsQueueEnv(t)!
  const env: Record<string, string> = { ...testEnv('unused'), TALLY_DATABASE_URL: await createTestDatabase(t), ...nats, TALLY_FLUSH_INTERVAL_MS: '20', TALLY_LOG_LEVEL: 'info' }
  delete env.TALLY_DATA_DIR
  // Each process on a data dir of its own, as on two hosts: the recording bytes the capture process
  // takes are in PostgreSQL (TALLY_REPLAY_STORE's default there), where the api process reads them.
  const [captureDir, apiDir] = [await tempDir(t), await tempDir(t)]
  const processes: ServerProcess[] = []
  t.after(() => Promise.all(processes.map(stop)))
  // The api,worker process first (it migrates the database and makes the project), then stopped.
  let api = await startServerProcess(apiDir, { ...env, TALLY_ROLE: 'api,worker' })
  await stop(api)
  const capture = await startServerProcess(captureDir, { ...env, TALLY_ROLE: 'capture' })
  processes.push(capture)

  const session = 'role-session-1'
  const body = gzipSync(Buffer.from(JSON.stringify(aSnapshotBatch(env.TALLY_PROJECT_API_KEY!, session, aRecording(Date.now() - 60_000)))))
  const res = await fetch(`${capture.url}/s/`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body })
  assert.equal(res.status, 200, await res.text())
  // No worker runs: the summary waits on the stream, unconsumed (a capture process that ran the
  // metadata worker would have taken it within its one-second linger).
  await new Promise((r) => setTimeout(r, 2500))
  assert.equal(await recordingBacklog(nats.TALLY_NATS_URL!, nats.TALLY_NATS_STREAM!), 1)

  api = await startServerProcess(apiDir, { ...env, TALLY_ROLE: 'api,worker' })
  processes.push(api)
  const auth = { authorization: `Bearer ${env.TALLY_PERSONAL_API_KEY}` }
  const list = await eventually(async () => {
    const r = await fetch(`${api.url}/api/projects/@current/session_recordings/`, { headers: auth })
    const json = (await r.json()) as { results: Array<{ id: string; click_count: number }> }
    return json.results.length > 0 && json.results
  })
  assert.deepEqual(list.map((r) => r.id), [session])
  assert.equal(list[0]!.click_count, 1)
  const sources = (await (await fetch(`${api.url}/api/projects/@current/session_recordings/${session}/snapshots/`, { headers: auth })).json()) as { sources: unknown[] }
  assert.equal(sources.sources.length, 1)
  const block = await fetch(`${api.url}/api/projects/@current/session_recordings/${session}/snapshots/?source=blob_v2&blob_key=0`, { headers: auth })
  const lines = await block.text()
  assert.equal(block.status, 200, lines)
  assert.equal(lines.trim().split('\n').length, aRecording(0).length)
  assert.equal(await recordingBacklog(nats.TALLY_NATS_URL!, nats.TALLY_NATS_STREAM!), 0)
})
