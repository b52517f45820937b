// node --import tsx bench/ingest-worker.ts — the ingestion worker's CPU per event for queue messages of today's format
// (step properties and shape beside the properties text) against the previous format (the steps parse
// the properties), alternately in the same process, so the machine's load falls on both alike. Each
// micro-batch of posthog-js events (BENCH_WORKER_BATCH, default 1,000; BENCH_WORKER_ROUNDS, default 20,
// per format) goes through decode, GeoIP (a public address on one event in ten), persons (PGlite in
// memory, the users known after the first round), definitions and the ClickHouse row text; the stores'
// own work (DuckDB's or ClickHouse's insert) is left out: it is the same for both. Not a test: it prints.
import { randomUUID } from 'node:crypto'
import { MIGRATIONS } from '../src/app/create-adapters.ts'
import { decodeQueuedEvent, encodeQueuedEvent } from '../src/ingestion/queued-event.ts'
import type { StoredEvent } from '../src/ingestion/event-store.ts'
import { createDefinitionsStep } from '../src/ingestion/steps/definitions-step.ts'
import { createGeoIpStep } from '../src/ingestion/steps/geoip-step.ts'
import { createPersonsStep } from '../src/ingestion/steps/persons-step.ts'
import type { BatchStep } from '../src/ingestion/results.ts'
import { eventRowsText } from '../src/storage/clickhouse/clickhouse-event-rows.ts'
import { createMmdbGeoIpLookup } from '../src/storage/mmdb/mmdb-geoip-lookup.ts'
import { openPgliteSqlClient } from '../src/storage/pglite/pglite-sql-client.ts'
import { createSqlDefinitionStore } from '../src/storage/sql/sql-definition-store.ts'
import { createSqlIngestionGroupStore, createSqlIngestionPersonStore } from '../src/storage/sql/sql-ingestion-person-store.ts'
import { createSqlProjectStore } from '../src/storage/sql/sql-project-store.ts'
import { runMigrations } from '../src/storage/sql/run-migrations.ts'
import { browserProperties } from './ingest-payloads.ts'

const BATCH = Number(process.env.BENCH_WORKER_BATCH ?? 1_000)
const ROUNDS = Number(process.env.BENCH_WORKER_ROUNDS ?? 20)

const meta = await openPgliteSqlClient('memory://')
await runMigrations(meta, MIGRATIONS.metadata)
const { project } = await createSqlProjectStore(meta).bootstrap({
  organizationName: 'Org', projectName: 'P', projectApiToken: 'phc_bench_worker',
  user: { email: 'o@example.com', firstName: 'O' }, personalKey: { hash: 'h', mask: 'phx_...', label: 'k' },
})
const noCache = { invalidatePersons() {}, invalidateGroups() {} }
const steps: Array<BatchStep<StoredEvent, StoredEvent>> = [
  createGeoIpStep({ geoip: createMmdbGeoIpLookup(), settingsOf: async () => ({ geoipEnabled: true, anonymizeIps: false }) }),
  createPersonsStep({
    persons: createSqlIngestionPersonStore(meta),
    overrides: { write: async () => {} },
    cache: noCache,
    groups: { store: createSqlIngestionGroupStore(meta), ensureGroupTypes: async () => [] },
  }),
  createDefinitionsStep({ store: createSqlDefinitionStore(meta) }),
]

/** One micro-batch of queue messages: today's format, or the previous one (the header's first seven fields). */
function messages(round: number, previous: boolean): string[] {
  return Array.from({ length: BATCH }, (_, i) => {
    const properties = { ...browserProperties('phc_bench_worker', round * BATCH + i), $ip: i % 10 === 0 ? '89.160.20.112' : '127.0.0.1' }
    const at = new Date()
    const line = encodeQueuedEvent(project.id, {
      uuid: randomUUID(), event: i % 10 === 0 ? '$autocapture' : '$pageview', distinctId: `user-${i % 500}`, properties,
      elementsChain: '', timestamp: at, createdAt: at, sentAt: null,
    })
    if (!previous) return line
    const tab = line.indexOf('\t')
    return `${JSON.stringify((JSON.parse(line.slice(0, tab)) as unknown[]).slice(0, 7))}${line.slice(tab)}`
  })
}

async function work(lines: string[]): Promise<number> {
  let events = lines.map(decodeQueuedEvent)
  for (const step of steps) {
    const results = await step.run(events)
    events = results.flatMap((r) => (r.kind === 'ok' ? [r.value] : []))
  }
  return eventRowsText(events).length
}

const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

// Warm-up: the persons exist and the code is optimised before anything is measured.
for (let r = 0; r < 3; r++) {
  await work(messages(r, false))
  await work(messages(r, true))
}
const spent = { today: 0, previous: 0 }
for (let r = 0; r < ROUNDS; r++) {
  for (const previous of r % 2 === 0 ? [false, true] : [true, false]) {
    const lines = messages(r, previous)
    const t0 = cpuMs()
    await work(lines)
    spent[previous ? 'previous' : 'today'] += cpuMs() - t0
  }
}
const perK = (ms: number) => ((1000 * ms) / (ROUNDS * BATCH)).toFixed(1)
console.log(`ingestion worker, ${ROUNDS} micro-batches of ${BATCH} posthog-js events per format, CPU of this process (PGlite included)`)
console.log(`  previous format (steps parse the properties): ${perK(spent.previous)} ms per 1,000 events`)
console.log(`  today's format (step properties and shape):   ${perK(spent.today)} ms per 1,000 events (${((100 * spent.today) / spent.previous).toFixed(0)} %)`)
await meta.close()
