// npm run bench:export — memory and CPU of an event export over BENCH_EVENTS (default 10M) events,
// generated with SQL range() straight into a fresh DuckDB file (as bench/query.ts does). Each format
// is exported through the same service the API and the CLI use (engine stream -> encoder -> a file
// stream with backpressure; here /dev/null), in this process, with DuckDB's server limits (512MB;
// reads get the full limit). Printed per format: RSS before, RSS at 10/50/90 % of the rows and its
// peak (flat memory: the peak does not grow with the rows), CPU ms per 1,000 events and bytes written.
// Not a test: the machine is shared, so the figures are CPU time, not wall time, and RSS.
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { MIGRATIONS } from '../src/app/create-adapters.ts'
import { openDuckDb } from '../src/storage/duckdb/open-duckdb.ts'
import { createDuckDbEventExportReads } from '../src/storage/duckdb/duckdb-event-export-reads.ts'
import { createEventExportService } from '../src/modules/events/event-export-service.ts'
import { EXPORT_FORMATS, isExportFormat, type ExportFormat } from '../src/modules/events/event-export-formats.ts'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000)
const FORMATS = (process.env.BENCH_FORMATS ?? [...EXPORT_FORMATS.keys()].join(',')).split(',').filter(isExportFormat) as ExportFormat[]

const GENERATE = `
INSERT INTO events (uuid, project_id, event, distinct_id, properties, elements_chain, timestamp, created_at, person_id, person_properties)
SELECT uuid(), 1,
  CASE WHEN i % 20 < 12 THEN '$pageview' WHEN i % 20 < 17 THEN 'signup' ELSE 'purchase' END,
  'user-' || (i % 300000),
  json_object('$browser', 'browser-' || (hash(i) % 50), '$current_url', 'https://example.com/' || (i % 200), 'amount', i % 100, 'note', 'a "quoted", text'),
  CASE WHEN i % 10 = 0 THEN 'button.buy:text="Buy"nth-child="1"' ELSE '' END,
  TIMESTAMPTZ '2024-06-01 00:00:00+00' + to_microseconds(CAST(i AS BIGINT) * ${Math.floor(2_592_000_000_000 / EVENTS)}),
  TIMESTAMPTZ '2024-06-01 00:00:00+00',
  CAST(md5('person-' || (i % 300000)) AS UUID),
  '{}'
FROM range(${EVENTS}) t(i)`

const rssMb = () => Math.round(process.memoryUsage.rss() / 1e6)

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tally-bench-export-'))
  try {
    const file = path.join(dir, 'events.duckdb')
    const duck = await openDuckDb(file, MIGRATIONS.duckdb, { memoryLimit: '512MB', writeMemoryLimit: '128MB', idleTrimMs: 30_000 })
    const t0 = Date.now()
    await duck.connection.run(GENERATE)
    await duck.connection.run('CHECKPOINT')
    console.log(`${EVENTS.toLocaleString('en')} events generated in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
    const service = createEventExportService(createDuckDbEventExportReads({ connect: () => duck.connect({ reads: true }), disconnect: (c) => duck.disconnect(c) }))
    for (const format of FORMATS) {
      global.gc?.()
      const before = rssMb()
      const marks = new Map<number, number>()
      let peak = before
      let bytes = 0
      const sampler = setInterval(() => {
        const rss = rssMb()
        peak = Math.max(peak, rss)
        const done = service.stats().rows
        for (const pct of [10, 50, 90]) if (!marks.has(pct) && done >= (EVENTS * pct) / 100) marks.set(pct, rss)
      }, 100)
      const startRows = service.stats().rows
      const cpu0 = process.cpuUsage()
      const wall0 = Date.now()
      const count = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          bytes += chunk.length
          cb(null, chunk)
        },
      })
      await pipeline(Readable.from(service.export({ projectId: 1, properties: [] }, format, new AbortController().signal)), count, createWriteStream('/dev/null'))
      clearInterval(sampler)
      const cpu = process.cpuUsage(cpu0)
      const rows = service.stats().rows - startRows
      const cpuMs = (cpu.user + cpu.system) / 1000
      console.log(
        `${format.padEnd(8)} rows ${rows.toLocaleString('en')}  RSS MB before ${before}, at 10/50/90 % ${[10, 50, 90].map((p) => marks.get(p) ?? '-').join('/')}, peak ${peak}  ` +
          `CPU ${(cpuMs / (rows / 1000)).toFixed(2)} ms per 1k events (${(cpuMs / 1000).toFixed(1)} s CPU, ${((Date.now() - wall0) / 1000).toFixed(1)} s wall)  ${(bytes / 1e6).toFixed(0)} MB written`,
      )
    }
    await duck.close()
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
