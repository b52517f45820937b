// node --import tsx bench/queue-publish.ts — CPU (all threads) of the embedded queue alone per 1,000 events: 400
// bench:ingest requests of 100 events published 32 at a time (write + fdatasync, group commit) and consumed
// from the in-memory tail, three rounds on fresh directories (the first warms the JIT). Not a test: it prints.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { openFileEventQueue } from '../src/queue/file-event-queue.ts'
import { joinQueuedLines, pooledRandomBytes, transformCaptureRequest } from '../src/modules/capture/capture-transform.ts'
import { gzipBatchBody } from './ingest-payloads.ts'
const random = pooledRandomBytes()
const reqs: string[][] = []
for (let seed = 0; seed < 400; seed++) {
  const body = gzipBatchBody('phc_bench', 100, seed)
  reqs.push(joinQueuedLines(transformCaptureRequest({ body: { body, contentType: 'application/json', contentEncoding: 'gzip', query: {}, method: 'POST', maxBytes: 1e8 }, isEngage: false, bearer: null, ip: '10.1.2.3', nowMs: Date.now() }, random), 1))
}
for (let round = 0; round < 3; round++) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'qb-'))
  const q = await openFileEventQueue({ dir })
  let got = 0
  q.consume(async (m) => { got += m.length }, { maxBatch: 10000, maxWaitMs: 5 })
  const c0 = process.cpuUsage(); const t0 = performance.now()
  // 32 in flight, like the bench's connections
  let i = 0
  await Promise.all(Array.from({ length: 32 }, async () => { while (i < reqs.length) await q.publish(reqs[i++]!) }))
  while (got < 40000) await new Promise((r) => setTimeout(r, 1))
  const c = process.cpuUsage(c0)
  console.log(`publish+consume 40,000 events: ${((c.user + c.system) / 1000 / 40).toFixed(2)} ms CPU/1,000, ${(performance.now() - t0).toFixed(0)} ms wall`)
  await q.close(); await rm(dir, { recursive: true, force: true })
}
