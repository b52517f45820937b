import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runKillScenario, type KillScenario } from '../helpers/kill-matrix.ts'

// The kill -9 matrix, second half: kills in the worker (after the store, acknowledgement, segment
// deletion) while accepting, and kills during the restart (recovery, redelivery) of a server that
// died with everything still in its queue. After a last unarmed restart every event that got a 200
// must be stored exactly once.
const SCENARIOS: KillScenario[] = [
  { point: 'pipeline.after-store:2', phase: 'accept' },
  { point: 'worker.before-ack:2', phase: 'accept' },
  { point: 'queue.ack.after-write:2', phase: 'accept' },
  { point: 'queue.segment.before-delete', phase: 'accept' },
  { point: 'queue.segment.after-delete', phase: 'accept' },
  { point: 'worker.after-ack:2', phase: 'accept' },
  { point: 'recover.before-truncate', phase: 'restart' },
  { point: 'recover.after-truncate', phase: 'restart' },
  { point: 'recover.done', phase: 'restart' },
  { point: 'worker.batch-received', phase: 'restart' },
  { point: 'pipeline.before-store', phase: 'restart' },
  { point: 'pipeline.after-store', phase: 'restart' },
  { point: 'queue.ack.after-write', phase: 'restart' },
]

for (const s of SCENARIOS) {
  test(`kill -9 at ${s.point} (${s.phase === 'accept' ? 'while accepting' : 'during the restart'}): every acknowledged event is stored exactly once`, { timeout: 300_000 }, async (t) => {
    const r = await runKillScenario(t, s)
    assert.deepEqual(r.missing, [], `${r.missing.length} of ${r.acked} acknowledged events lost`)
    assert.equal(r.duplicates, 0)
  })
}
