import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { MIGRATIONS } from '../../src/app/create-adapters.ts'
import type { StoredEvent } from '../../src/ingestion/event-store.ts'
import { createPersonsStep } from '../../src/ingestion/steps/persons-step.ts'
import { openDuckDb, type DuckDb } from '../../src/storage/duckdb/open-duckdb.ts'
import { createDuckDbPersonOverrideStore } from '../../src/storage/duckdb/duckdb-person-override-store.ts'
import { openPgliteSqlClient } from '../../src/storage/pglite/pglite-sql-client.ts'
import type { SqlClient } from '../../src/storage/sql/sql-client.ts'
import { createSqlIngestionPersonStore } from '../../src/storage/sql/sql-ingestion-person-store.ts'
import { createSqlProjectStore } from '../../src/storage/sql/sql-project-store.ts'
import { runMigrations } from '../../src/storage/sql/run-migrations.ts'
import { countingSqlClient } from '../contracts/ingestion-person-store.contract.ts'

// The persons step on the real stores (PGlite, DuckDB), its SQL counted: the set-based rule.
let meta: SqlClient
let duck: DuckDb
let projectId: number
const statements = { count: 0 }
const invalidated: string[] = []

before(async () => {
  meta = await openPgliteSqlClient('memory://')
  await runMigrations(meta, MIGRATIONS.metadata)
  const { project } = await createSqlProjectStore(meta).bootstrap({
    organizationName: 'Org', projectName: 'P', projectApiToken: 'phc_persons_step',
    user: { email: 'o@example.com', firstName: 'O' }, personalKey: { hash: 'h', mask: 'phx_...', label: 'k' },
  })
  projectId = project.id
  duck = await openDuckDb(':memory:', MIGRATIONS.duckdb)
})
after(async () => {
  await meta?.close()
  await duck?.close()
})

async function makeStep() {
  return createPersonsStep({
    persons: createSqlIngestionPersonStore(countingSqlClient(meta, statements)),
    overrides: createDuckDbPersonOverrideStore(await duck.connect()),
    cache: { invalidatePersons: (_p, ids) => void invalidated.push(...ids) },
  })
}

let clock = Date.parse('2024-06-01T00:00:00Z')
const stored = (event: string, distinctId: string, properties: Record<string, unknown>): StoredEvent => ({
  uuid: randomUUID(), projectId, event, distinctId, properties: JSON.stringify(properties), elementsChain: '',
  timestamp: new Date((clock += 10)), createdAt: new Date(clock), personId: null,
})

/** Statements the step issues for: n persons made under two ids each, then n $identify merging each pair. */
async function statementsFor(n: number, tag: string): Promise<{ create: number; merge: number }> {
  const step = await makeStep()
  const first = Array.from({ length: n }, (_, i) => [
    stored('$pageview', `${tag}-anon-${i}`, { $set: { i } }),
    stored('$pageview', `${tag}-user-${i}`, { $set_once: { first: i } }),
  ]).flat()
  let before = statements.count
  const r1 = await step.run(first)
  const create = statements.count - before
  assert.ok(r1.every((r) => r.kind === 'ok' && r.value.personId !== null))
  before = statements.count
  const r2 = await step.run(Array.from({ length: n }, (_, i) => stored('$identify', `${tag}-user-${i}`, { $anon_distinct_id: `${tag}-anon-${i}` })))
  const merge = statements.count - before
  assert.ok(r2.every((r) => r.kind === 'ok'))
  const found = await meta.query<{ n: number }>(
    `SELECT count(DISTINCT person_id)::int AS n FROM person_distinct_ids WHERE project_id = $1 AND distinct_id LIKE $2`, [projectId, `${tag}-%`],
  )
  assert.equal(found[0]!.n, n, 'each pair ends as one person')
  const overrides = (await (await duck.connect()).runAndReadAll('SELECT count(*)::INTEGER AS n FROM person_overrides')).getRowObjects()
  assert.ok(Number(overrides[0]!.n) >= n)
  return { create, merge }
}

test('persons step: the SQL statements for a batch do not grow with its size (1,000 events of 1,000 distinct ids = 2 events)', async (t) => {
  const small = await statementsFor(1, 'small')
  const large = await statementsFor(1000, 'large')
  t.diagnostic(`SQL statements per batch (BEGIN/COMMIT included): ${JSON.stringify(small)} for 1 pair, ${JSON.stringify(large)} for 1,000 pairs`)
  assert.deepEqual(large, small)
  assert.ok(small.create <= 8 && small.merge <= 12, `statements: ${JSON.stringify(small)}`)
  assert.ok(invalidated.includes('large-anon-999'))
})

test('persons step: CPU per 1,000 events on a batch of 10,000 (reported, not asserted)', async (t) => {
  const step = await makeStep()
  const batch = Array.from({ length: 10_000 }, (_, i) =>
    stored('$pageview', `cpu-${i % 2500}`, { $set: { plan: i % 3 ? 'free' : 'pro', n: i }, $current_url: 'https://example.com/', $lib: 'web' }))
  for (const label of ['2,500 new persons', 'the same 2,500 persons, known']) {
    const events = batch.map((e) => ({ ...e, uuid: randomUUID(), timestamp: new Date((clock += 1)) }))
    const cpu = process.cpuUsage()
    const start = process.hrtime.bigint()
    const results = await step.run(events)
    const used = process.cpuUsage(cpu)
    const wall = Number(process.hrtime.bigint() - start) / 1e6
    assert.equal(results.filter((r) => r.kind === 'ok').length, 10_000)
    t.diagnostic(`persons step, 10,000 events / ${label}: CPU ${((used.user + used.system) / 1000 / 10).toFixed(1)} ms per 1,000 events (wall ${wall.toFixed(0)} ms total)`)
  }
})
