import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runKillScenario } from '../helpers/kill-matrix.ts'

// The kill -9 matrix, first half: the server is SIGKILLed at a crash point while it accepts
// batches, flushes its queue and hands them to the worker's pipeline; after an unarmed restart every
// event that got a 200 must be stored exactly once. (Second half, acknowledgement and restarts:
// kill-matrix-worker; the deliberately broken variant: kill-matrix-broken.)
const POINTS = [
  // HTTP accept
  'capture.body-received',
  'capture.body-received:7',
  'capture.after-publish',
  'capture.after-publish:9',
  // queue flush (group commit) and segment rotation
  'queue.flush.before-write:2',
  'queue.flush.after-write:2',
  'queue.flush.after-datasync:2',
  'queue.flush.after-resolve:3',
  'queue.rotate.before-open',
  'queue.rotate.after-open:2',
  // the worker's pipeline
  'worker.batch-received:2',
  'pipeline.after-decode:2',
  'pipeline.before-store:2',
]

for (const point of POINTS) {
  test(`kill -9 at ${point}: every acknowledged event is stored exactly once`, { timeout: 300_000 }, async (t) => {
    const r = await runKillScenario(t, { point, phase: 'accept' })
    assert.deepEqual(r.missing, [], `${r.missing.length} of ${r.acked} acknowledged events lost`)
    assert.equal(r.duplicates, 0)
  })
}

// The capture decode threads: every body goes to a thread (no size threshold) and the whole process
// is SIGKILLed while a thread decodes one; the requests in flight were not acknowledged.
for (const point of ['capture.decode-thread:3', 'capture.decode-thread:11']) {
  test(`kill -9 at ${point} (every body decoded in a thread): every acknowledged event is stored exactly once`, { timeout: 300_000 }, async (t) => {
    const r = await runKillScenario(t, { point, phase: 'accept', env: { TALLY_CAPTURE_DECODE_MIN_BYTES: '0', TALLY_CAPTURE_DECODE_THREADS: '2' } })
    assert.ok(r.acked > 0, 'requests were acknowledged before the kill')
    assert.deepEqual(r.missing, [], `${r.missing.length} of ${r.acked} acknowledged events lost`)
    assert.equal(r.duplicates, 0)
  })
}

// The persons step merging persons that earlier micro-batches stored: killed between its writes to
// the two stores (overrides in DuckDB, then persons in the metadata store) and after both. After the
// restart every acknowledged merge shows in the persons API and in the events' person ids.
for (const point of ['persons.merge.after-overrides', 'persons.merge.after-apply']) {
  test(`kill -9 at ${point}: every acknowledged event stored once, every acknowledged merge kept`, { timeout: 300_000 }, async (t) => {
    const r = await runKillScenario(t, { point, phase: 'accept', merges: true })
    assert.deepEqual(r.missing, [], `${r.missing.length} of ${r.acked} acknowledged events lost`)
    assert.equal(r.duplicates, 0)
    assert.ok(r.merges > 0, 'no merge was acknowledged')
    assert.deepEqual(r.unmerged, [], `${r.unmerged.length} of ${r.merges} acknowledged merges not kept`)
  })
}
