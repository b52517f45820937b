// CPU of the ingestion definitions step per 1,000 events (not a timed test). Warm: a steady stream
// of known definitions (parse, collect, cache look-ups; no write). Cold: every batch brings new
// names (the PGlite upserts included, run in this process).
// Run: node --import tsx bench/definitions-step.ts
import { randomUUID } from 'node:crypto'
import { MIGRATIONS } from '../src/app/create-adapters.ts'
import type { StoredEvent } from '../src/ingestion/event-store.ts'
import { createDefinitionsStep } from '../src/ingestion/steps/definitions-step.ts'
import { openPgliteSqlClient } from '../src/storage/pglite/pglite-sql-client.ts'
import { createSqlDefinitionStore } from '../src/storage/sql/sql-definition-store.ts'
import { createSqlProjectStore } from '../src/storage/sql/sql-project-store.ts'
import { runMigrations } from '../src/storage/sql/run-migrations.ts'

const BATCH = 1000
const meta = await openPgliteSqlClient('memory://')
await runMigrations(meta, MIGRATIONS.metadata)
const { project } = await createSqlProjectStore(meta).bootstrap({
  organizationName: 'Org', projectName: 'P', projectApiToken: 'phc_bench_definitions',
  user: { email: 'o@example.com', firstName: 'O' }, personalKey: { hash: 'h', mask: 'phx_...', label: 'k' },
})

/** A posthog-js `$pageview`-like event: ~35 properties, a few custom ones, `$set` on one in ten. */
function pageview(i: number, fresh: string): StoredEvent {
  const properties: Record<string, unknown> = {
    $os: 'Mac OS X', $os_version: '14.4.0', $browser: 'Chrome', $browser_version: 124, $device_type: 'Desktop',
    $current_url: `https://app.example.com/page/${i % 50}`, $host: 'app.example.com', $pathname: `/page/${i % 50}`,
    $raw_user_agent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
    $screen_height: 1117, $screen_width: 1728, $viewport_height: 963, $viewport_width: 1728, $lib: 'web', $lib_version: '1.449.2',
    $insert_id: randomUUID(), $time: 1_767_225_600.123, distinct_id: `user-${i % 300}`, $device_id: randomUUID(),
    $referrer: '$direct', $referring_domain: '$direct', $session_id: randomUUID(), $window_id: randomUUID(), $pageview_id: randomUUID(),
    $is_identified: i % 3 === 0, $process_person_profile: true, token: 'phc_x', $ip: '127.0.0.1', utm_source: 'newsletter',
    $feature_flag_request_id: randomUUID(), 'feature/new-nav': true, plan: ['free', 'pro'][i % 2], seats: i % 40,
    [`${fresh}custom_${i % 20}`]: 'v',
  }
  if (i % 10 === 0) properties.$set = { email: `u${i}@x.io`, [`${fresh}trait`]: 1 }
  return {
    uuid: randomUUID(), projectId: project.id, event: i % 4 === 0 ? `${fresh}clicked` : '$pageview', distinctId: `user-${i % 300}`,
    properties: JSON.stringify(properties), elementsChain: '', timestamp: new Date(), createdAt: new Date(), personId: null,
  }
}

const step = createDefinitionsStep({ store: createSqlDefinitionStore(meta) })
const batches = (n: number, fresh: (b: number) => string) => Array.from({ length: n }, (_, b) => Array.from({ length: BATCH }, (_, i) => pageview(i, fresh(b))))

async function measure(label: string, input: StoredEvent[][]) {
  const start = process.cpuUsage()
  const wall = performance.now()
  for (const batch of input) await step.run(batch)
  const cpu = process.cpuUsage(start)
  const ms = (cpu.user + cpu.system) / 1000 / input.length
  console.log(`${label}: ${ms.toFixed(1)} ms CPU per 1,000 events (wall ${((performance.now() - wall) / input.length).toFixed(1)} ms), ${input.length} batches`)
}

await step.run(batches(1, () => '')[0]!) // the known names
await measure('warm (known definitions, no write)', batches(30, () => ''))
await measure('cold (new names every batch, PGlite writes in-process)', batches(10, (b) => `n${b}_`))
await meta.close()
