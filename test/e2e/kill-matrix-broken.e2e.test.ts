import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runKillScenario } from '../helpers/kill-matrix.ts'

// Proof that the kill -9 matrix can fail: with TALLY_UNSAFE_ACK_BEFORE_FSYNC (test-only) the queue
// answers its publishers, and lets the 200s go out, before it writes their messages; killed at
// `queue.flush.before-write`, the matrix must find acknowledged events missing after the restart.
//
// Why not "fsync skipped", literally: a SIGKILL does not drop the page cache, so a write that was
// never fdatasync'd still reaches the disk and no process kill can tell the difference; only a
// power cut (or a VM snapshot without the cache) would. Acknowledging before the write is the
// broken ordering a process kill *can* see, so that is the variant this test proves is caught.
// The same cells on the real queue ('queue.flush.before-write:2' in kill-matrix-accept) lose nothing.
test('the matrix catches a queue that acknowledges before writing (deliberately broken variant)', { timeout: 300_000 }, async (t) => {
  const env = { TALLY_UNSAFE_ACK_BEFORE_FSYNC: '1' }
  const lost: string[] = []
  for (const point of ['queue.flush.before-write:2', 'queue.flush.before-write:3']) {
    const r = await runKillScenario(t, { point, phase: 'accept', env })
    assert.ok(r.acked > 0)
    lost.push(...r.missing)
    t.diagnostic(`${point}: ${r.missing.length} of ${r.acked} acknowledged events lost`)
    if (lost.length > 0) break
  }
  assert.ok(lost.length > 0, 'the broken queue lost nothing: the matrix cannot tell a safe queue from an unsafe one')
})
