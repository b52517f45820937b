// npm run bench:replay — session replay ingestion and serving, in one process on a fresh embedded data
// dir (Fastify inject: no sockets, so the figures are the server's own work). Not a test: it prints.
//
// Recordings as posthog-js 1.4xx sends them: a full snapshot (a ~1,500-node page), then incremental
// snapshots every flush (3 s: DOM mutations, mouse moves, scrolls, inputs, a click now and then, console
// lines), with posthog-js's own packing (full snapshots and mutations gzip'd into latin1 text, `cv:
// "2024-10"`) and the body gzip'd (gzip-js, text/plain). Prints:
// - accepted MB/s (compressed body bytes) and snapshot events/s, with REPLAY_CONCURRENCY requests in
//   flight for REPLAY_SECONDS (default 4 and 15 s), and the metadata worker drained after;
// - the parse-only ceiling on the same bodies in the same run (gunzip + JSON.parse, nothing stored):
//   CPU per MB of each, and their ratio (target: ingestion at most 3x the ceiling);
// - RSS (peak sampled), disk bytes per recorded minute (session files);
// - a 30-minute recording (600 flushes): time to first frame (sources + the first 20 blocks) and to
//   all its snapshots through the API (target: under 1 s).
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import pino from 'pino'
import { createApp } from '../src/app/create-app.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { decodeCaptureBody } from '../src/domain/events/index.ts'
import { generateToken } from '../src/shared/ids.ts'

const SECONDS = Number(process.env.REPLAY_SECONDS ?? 15)
const CONCURRENCY = Number(process.env.REPLAY_CONCURRENCY ?? 4)
const FLUSH_MS = 3000
const WORDS = 'checkout basket product price delivery account search filter review colour size order'.split(' ')

const pack = (v: unknown) => String.fromCharCode(...gzipSync(Buffer.from(JSON.stringify(v))))
let nodeId = 10

function textNode(i: number) {
  return { type: 3, textContent: `${WORDS[i % WORDS.length]} ${i} ${WORDS[(i * 7) % WORDS.length]}`, id: nodeId++ }
}
function element(tag: string, children: unknown[], attributes: Record<string, string> = {}) {
  return { type: 2, tagName: tag, attributes, childNodes: children, id: nodeId++ }
}

/** A product-list page of about 1,500 nodes. */
function fullSnapshot(at: number) {
  const items = Array.from({ length: 120 }, (_, i) =>
    element('li', [element('a', [textNode(i)], { href: `/p/${i}`, class: 'product-link' }), element('span', [textNode(i + 1)], { class: 'price' })], { class: 'product' }))
  const body = element('body', [element('header', [element('h1', [textNode(0)])]), element('ul', items, { class: 'grid' }), element('input', [], { type: 'text', name: 'q' })])
  const html = element('html', [element('head', [element('title', [textNode(1)])]), body])
  return { type: 2, timestamp: at, data: pack({ node: { type: 0, childNodes: [{ type: 1, name: 'html', publicId: '', systemId: '', id: 2 }, html], id: 1 }, initialOffset: { top: 0, left: 0 } }), cv: '2024-10' }
}

/** What posthog-js sends in one flush after the first: 3 s of activity. */
function incremental(at: number, n: number) {
  const out: object[] = []
  for (let i = 0; i < 6; i++) {
    const adds = Array.from({ length: 4 }, (_, k) => ({ parentId: 20 + k, nextId: null, node: element('div', [textNode(n * 10 + k)], { class: 'toast' }) }))
    const texts = [{ id: 30 + i, value: `${WORDS[(n + i) % WORDS.length]} updated ${n}` }]
    out.push({ type: 3, timestamp: at + i * 400, data: { source: 0, texts: pack(texts), attributes: pack([{ id: 40, attributes: { class: `state-${n}` } }]), removes: pack([]), adds: pack(adds) }, cv: '2024-10' })
  }
  for (let i = 0; i < 10; i++) out.push({ type: 3, timestamp: at + i * 250, data: { source: 1, positions: [{ x: 100 + i, y: 200 + n % 50, id: 50, timeOffset: -20 }] } })
  out.push({ type: 3, timestamp: at + 1200, data: { source: 3, id: 1, x: 0, y: (n * 37) % 2000 } })
  if (n % 3 === 0) out.push({ type: 3, timestamp: at + 1500, data: { source: 2, type: 2, id: 60, x: 140, y: 320 } })
  if (n % 4 === 0) out.push({ type: 3, timestamp: at + 1800, data: { source: 5, text: '*'.repeat(n % 12), isChecked: false, id: 61 } })
  if (n % 10 === 0) out.push({ type: 6, timestamp: at + 2000, data: { plugin: 'rrweb/console@1', payload: { level: n % 20 === 0 ? 'error' : 'log', payload: [`"step ${n}"`], trace: [] } } })
  return out
}

function flushBody(token: string, session: string, at: number, n: number): { body: Buffer; events: number } {
  const rrweb = n === 0 ? [{ type: 4, timestamp: at, data: { href: 'https://shop.example.com/list', width: 1280, height: 800 } }, fullSnapshot(at + 1)] : incremental(at, n)
  const batch = [{ event: '$snapshot', properties: { $snapshot_data: rrweb, $session_id: session, $window_id: `${session}-w`, distinct_id: `user-${session}`, token, $lib: 'web' } }]
  return { body: gzipSync(Buffer.from(JSON.stringify(batch))), events: rrweb.length }
}

const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

async function main() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tally-bench-replay-'))
  const token = generateToken('phc_')
  const personal = generateToken('phx_')
  const config = loadConfig({}, { TALLY_DATA_DIR: dataDir, TALLY_PROJECT_API_KEY: token, TALLY_PERSONAL_API_KEY: personal, TALLY_LOG_LEVEL: 'silent' })
  const app = await createApp(config, pino({ level: 'silent' }))
  let peakRss = 0
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100)
  try {
    // Bodies: sessions of 20 flushes (one minute) each, made up front.
    const bodies: { body: Buffer; events: number }[] = []
    const start = Date.now() - 3_600_000
    for (let s = 0; s < 40; s++) for (let n = 0; n < 20; n++) bodies.push(flushBody(token, `bench-${s}`, start + n * FLUSH_MS, n))
    const mb = (b: number) => b / 1024 / 1024

    // The parse-only ceiling: decode every body once.
    let c0 = cpuMs()
    let ceilingBytes = 0
    const t0 = performance.now()
    while (performance.now() - t0 < 3000) {
      for (const b of bodies) {
        decodeCaptureBody({ body: b.body, contentType: 'text/plain', method: 'POST', rawStrings: true, maxBytes: 100 * 1024 * 1024 })
        ceilingBytes += b.body.length
      }
    }
    const ceilingCpuPerMb = (cpuMs() - c0) / mb(ceilingBytes)

    // Ingestion through /s/ for SECONDS, then the worker drained (its CPU counts too).
    let sent = 0
    let bytes = 0
    let events = 0
    let failed = 0
    c0 = cpuMs()
    const t1 = performance.now()
    const worker = async () => {
      while (performance.now() - t1 < SECONDS * 1000) {
        const b = bodies[sent++ % bodies.length]!
        const res = await app.http.inject({ method: 'POST', url: '/s/', headers: { 'content-type': 'text/plain' }, payload: b.body })
        if (res.statusCode === 200) {
          bytes += b.body.length
          events += b.events
        } else failed++
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    const acceptSeconds = (performance.now() - t1) / 1000
    await app.replay.drain(60_000)
    const ingestCpuPerMb = (cpuMs() - c0) / mb(bytes)
    const disk = await diskBytes(dataDir)
    const recordedMinutes = (sent / 20) * (19 * FLUSH_MS + 2000) / 60_000

    // A 30-minute recording: 600 flushes of one session, then read back through the API.
    for (let n = 0; n < 600; n++) {
      const b = flushBody(token, 'thirty-minutes', start + n * FLUSH_MS, n)
      await app.http.inject({ method: 'POST', url: '/s/', headers: { 'content-type': 'text/plain' }, payload: b.body })
    }
    await app.replay.drain(60_000)
    const headers = { authorization: `Bearer ${personal}` }
    const base = `/api/projects/@current/session_recordings/thirty-minutes/snapshots/`
    const t2 = performance.now()
    const { sources } = (await app.http.inject({ method: 'GET', url: base, headers })).json() as { sources: unknown[] }
    let firstFrameMs = 0
    let servedBytes = 0
    for (let i = 0; i < sources.length; i += 20) {
      const res = await app.http.inject({ method: 'GET', url: `${base}?source=blob_v2&start_blob_key=${i}&end_blob_key=${Math.min(sources.length, i + 20) - 1}`, headers })
      servedBytes += res.rawPayload.length
      if (i === 0) firstFrameMs = performance.now() - t2
    }
    const allMs = performance.now() - t2

    console.log(`session replay bench (in-process inject, ${CONCURRENCY} in flight, ${SECONDS} s; shared machine)`)
    console.log(`accepted: ${(mb(bytes) / acceptSeconds).toFixed(2)} MB/s of gzip bodies, ${Math.round(events / acceptSeconds)} snapshot events/s, ${sent - failed} requests, ${failed} failed`)
    console.log(`CPU per MB: ingestion ${ingestCpuPerMb.toFixed(0)} ms, parse-only ceiling ${ceilingCpuPerMb.toFixed(0)} ms, ratio ${(ingestCpuPerMb / ceilingCpuPerMb).toFixed(2)}x (target <= 3x)`)
    console.log(`peak RSS ${(peakRss / 1024 / 1024).toFixed(0)} MB; disk ${(disk / recordedMinutes / 1024).toFixed(0)} KB per recorded minute (${mb(disk).toFixed(1)} MB for ${recordedMinutes.toFixed(0)} min)`)
    console.log(`30-minute recording (${sources.length} blocks, ${mb(servedBytes).toFixed(1)} MB of JSON lines): first frame ${firstFrameMs.toFixed(0)} ms, all snapshots ${allMs.toFixed(0)} ms (target < 1000 ms)`)
  } finally {
    clearInterval(sampler)
    await app.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

async function diskBytes(dataDir: string): Promise<number> {
  const { readdir, stat } = await import('node:fs/promises')
  const dir = path.join(dataDir, 'recordings', 'sessions')
  let total = 0
  for (const p of await readdir(dir)) for (const f of await readdir(path.join(dir, p))) total += (await stat(path.join(dir, p, f))).size
  return total
}

await main()
