// node bench/perf-attribution.mjs dir/batch.data [events]
// Splits a `perf record -g` of the Tally server (BENCH_PERF=dir npm run bench:ingest) into the
// ingestion pipeline's stages, every thread included: each sample goes to the first stage whose
// rule matches a frame of its stack (rules in priority order), else to "other". With `events`
// (the events the phase carried) it prints ms of CPU per 1,000 events as well as shares.
import { execFileSync } from 'node:child_process'

const [file, eventsArg] = process.argv.slice(2)
if (!file) throw new Error('usage: perf-attribution.mjs <perf.data> [events]')

/** [stage, test on one frame "sym (dso)"]: the first stage with a matching frame takes the sample. */
const RULES = [
  ['GC', (f) => /v8::internal::(Scavenge|MarkCompact|ConcurrentMarking|Sweeper|Heap::|GCTracer|MinorMark|Evacuat|IncrementalMarking|ArrayBufferSweeper|MemoryAllocator|MarkingVisitor|MainMarkingVisitor|ConcurrentMarkingVisitor|PagedSpace|ScavengerCollector|Isolate::Sweep|LocalHeap::CollectGarbage)/.test(f)],
  ['V8 JIT compile', (f) => /v8::internal::(compiler::|Compiler::|baseline::|maglev::|OptimizingCompileDispatcher|Turbofan|wasm::)/.test(f)],
  ['persons step (JS + PGlite)', (f) => /persons-step\.ts|sql-ingestion-person-store|domain\/persons\/|domain\/groups\/|@electric-sql\/pglite|pglite-sql-client|wasm-function|duckdb-person-override-store|group-types/.test(f)],
  ['definitions step', (f) => /definitions-step\.ts|domain\/definitions\/|sql-definition-store/.test(f)],
  ['DuckDB insert (JS + its threads)', (f) => /libduckdb\.so|duckdb\.node|duckdb-event-store\.ts|@duckdb\/node-api/.test(f)],
  ['queue write + fsync', (f) => /segment-writer\.ts|segment-log\.ts|file-event-queue\.ts|fdatasync|ext4_sync_file|jbd2/.test(f)],
  ['worker read + decode', (f) => /segment-reader\.ts|message-tail\.ts|queued-event\.ts|ingestion\/pipeline\.ts|event-properties\.ts|store-events-step/.test(f)],
  ['capture decode (gunzip, parse, normalise, encode)', (f) => /capture-transform\.ts|decode-thread\.ts|decode-pool\.ts|domain\/events\/|inflate|zlib/.test(f)],
  ['HTTP (Fastify, sockets, logging)', (f) => /fastify|node:_http|node:http|node:net|llhttp|Parser::|tcp_|inet_|sock_|LibuvStreamWrap|capture-routes|capture-service|http\/|pino|public-body|node:internal\/streams|epoll|__x64_sys_(read|write|sendto|recvfrom|writev)|TCPWrap|StreamBase/.test(f)],
]

const out = execFileSync('perf', ['script', '-i', file, '-F', 'tid,ip,sym,dso'], { maxBuffer: 1 << 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
const byStage = new Map()
const byThread = new Map()
const samples = []
let total = 0
for (const block of out.split('\n\n')) {
  const lines = block.split('\n').filter((l) => l.trim() !== '')
  if (lines.length === 0) continue
  const tid = lines[0].trim()
  const frames = lines.slice(1).map((l) => l.trim().replace(/^[0-9a-f]+ /, ''))
  let stage = 'other'
  for (const [name, test] of RULES) {
    if (frames.some(test)) {
      stage = name
      break
    }
  }
  if (stage === 'other' && frames.length > 0 && frames.every((f) => /\[kernel/.test(f))) stage = 'other (kernel)'
  samples.push([tid, stage])
  const t = byThread.get(tid) ?? new Map()
  t.set(stage, (t.get(stage) ?? 0) + 1)
  byThread.set(tid, t)
}
// Off the main thread (the first tid seen is usually not it: the main thread has the most samples
// with JS frames), stacks through libc or DuckDB often do not unwind: such a sample goes to the
// stage that most of its thread's samples went to, marked "(by thread)".
const mainTid = [...byThread].sort((a, b) => (b[1].get('HTTP (Fastify, sockets, logging)') ?? 0) - (a[1].get('HTTP (Fastify, sockets, logging)') ?? 0))[0]?.[0]
const dominant = new Map()
for (const [tid, m] of byThread) {
  const best = [...m].filter(([s]) => !s.startsWith('other')).sort((a, b) => b[1] - a[1])[0]
  if (best && tid !== mainTid) dominant.set(tid, best[0])
}
for (const [tid, stage] of samples) {
  const s = stage.startsWith('other') && dominant.has(tid) ? `${dominant.get(tid)} (by thread)` : stage
  total++
  byStage.set(s, (byStage.get(s) ?? 0) + 1)
}

// perf samples at 997 Hz per thread on CPU: a sample is ~1.003 ms of CPU.
const events = eventsArg ? Number(eventsArg) : 0
const msPerSample = 1000 / 997
console.log(`${total} samples = ${(total * msPerSample / 1000).toFixed(2)} CPU s`)
for (const [stage, n] of [...byStage].sort((a, b) => b[1] - a[1])) {
  const per1000 = events ? `  ${((n * msPerSample * 1000) / events).toFixed(1).padStart(6)} ms/1,000 ev` : ''
  console.log(`${stage.padEnd(52)} ${((100 * n) / total).toFixed(1).padStart(5)} %${per1000}`)
}
console.log('\nby thread (samples; top stages):')
console.log(`main thread: ${mainTid}`)
for (const [tid, m] of [...byThread].sort((a, b) => sum(b[1]) - sum(a[1]))) {
  const top = [...m].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([s, n]) => `${s} ${n}`).join(', ')
  console.log(`${tid.padEnd(8)} ${String(sum(m)).padStart(6)}  ${top}`)
}

function sum(m) {
  let n = 0
  for (const v of m.values()) n += v
  return n
}
