// The event-SQL conformance suite: what every event engine (its EventDialect, its QueryEngine, its
// EventStore) must answer, checked against the pure domain (src/domain/properties' matcher,
// bucket-keys, plain JS over the fixture), and the event-side store contracts (test/contracts) on the
// same engine. An engine runs it with one call from its own file (event-sql.<engine>.test.ts):
// `eventSqlConformance('<engine>', open, { contracts })`.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import fc from 'fast-check'
import { matchProperty } from '../../src/domain/properties/match-property.ts'
import type { PropertyFilter } from '../../src/domain/properties/property-filter.ts'
import { EVENT_SQL_OPERATORS, type PropertyOperator } from '../../src/domain/properties/property-operators.ts'
import type { Plan } from '../../src/domain/query/query-plan.ts'
import type { EventStore } from '../../src/ingestion/event-store.ts'
import type { QueryEngine } from '../../src/modules/query/query-engine.ts'
import { anEvent } from '../contracts/builders.ts'
import { deadLetterStoreContract, type DeadLetterPorts } from '../contracts/dead-letter-store.contract.ts'
import { eventStoreContract, type EventPorts } from '../contracts/event-store.contract.ts'
import type { Open } from '../contracts/sql-harness.ts'
import { isDateOnlyToDateParse } from '../helpers/date-parse-gap.ts'
import { AppError } from '../../src/shared/errors.ts'
import { PLAN_CASES, FIXTURE, PROJECT, type CaseKey, type PlanCase } from './plan-cases.ts'

/** One engine under test: its event store (writes) and its query engine (plans compiled by its dialect). */
export interface EventSqlEngine {
  events: EventStore
  query: QueryEngine
  close(): Promise<void>
}

const GUARDS = { timeoutMs: 60_000, maxRows: 100_000 }
type Golden = [string, { filter: PropertyFilter; properties: Record<string, unknown> }, boolean]
// Cases of a relative date are left out: they pin their own `now`, and a query resolves at the wall
// clock (the property-based cases below run relative dates at the same clock on both sides).
const RELATIVE = /^-?\d+[hdwmy]$/
const GOLDEN = (JSON.parse(readFileSync(new URL('../golden/properties-cases.json', import.meta.url), 'utf8')) as Golden[])
  .filter(([, input]) => (EVENT_SQL_OPERATORS as readonly string[]).includes(input.filter.operator ?? 'exact'))
  .filter(([, input]) => !(typeof input.filter.value === 'string' && RELATIVE.test(input.filter.value)))

/** One case per event-SQL operator, typed so that a new operator in the table fails to compile here. */
type EventSqlOperator = Exclude<PropertyOperator, 'in' | 'not_in' | 'flag_evaluates_to'>
const ONE_PER_OPERATOR: Record<EventSqlOperator, unknown> = {
  exact: 'Alpha', is_not: 'Alpha', is_set: 'is_set', is_not_set: 'is_not_set', icontains: 'l%', not_icontains: 'ph',
  icontains_multi: ['zz', 'ALP'], not_icontains_multi: ['zz', 'be'], starts_with: 'al', not_starts_with: 'be', ends_with: 'HA',
  not_ends_with: 'ta', regex: '^[A-Z]', not_regex: 'a$', gt: 2, gte: '2.5', lt: 10, lte: '1e1', between: [1, 10],
  not_between: [1, 10], is_date_before: '2024-03-01', is_date_after: '-30d', is_date_exact: '2024-03-10T12:00:00Z',
  semver_eq: '1.2.3', semver_neq: '1.2.3', semver_gt: '1.2.0', semver_gte: '1.2.3', semver_lt: '2.0.0', semver_lte: '1.2.3',
  semver_tilde: '1.2.0', semver_caret: '1.0.0', semver_wildcard: '1.2.*',
}

// Stored values the generated filters run against: scalars only (the gaps for objects, arrays,
// 1e21+ and Unicode case folding are listed on propertyFilterSql), with LIKE wildcards, versions and dates.
const STORED: unknown[] = ['Alpha', 'alpha', 'beta', 'l%x', 'l_x', 'lax', '100%', '', ' 5', '5', '5.0', '1e1', '-3', 'nan', 'inf', 0, 2.5, 10, -1, true, false,
  null, '1.2.3', '1.2.10', '2.0.0-rc.1', '1.2', '2024-03-10', '2024-03-10T12:00:00Z', '2024-02-29T23:59:59Z', 'true', 'FALSE', 'É', 'é', '\\', "'"]
const MISSING = Symbol('missing')
const VALUES: unknown[] = [...STORED, MISSING]
const bagOf = (v: unknown): Record<string, unknown> => (v === MISSING ? { other: 1 } : { v })

async function ids(engine: EventSqlEngine, filter: PropertyFilter): Promise<number[]> {
  const plan: Plan = { source: { kind: 'events' }, select: [{ alias: 'id', expr: { op: 'column', name: 'distinct_id' } }], where: { op: 'property_filter', filter } }
  const rows = (await engine.query.run(PROJECT, plan, GUARDS)).rows
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b)
}

function domainIds(filter: PropertyFilter, now: number): number[] {
  return VALUES.flatMap((v, i) => (matchProperty(filter, bagOf(v), now) ? [i] : []))
}

/** Stores one event per value of VALUES (distinct_id = its index), the value as event and person property. */
async function storeValues(engine: EventSqlEngine): Promise<void> {
  await engine.events.insertBatch(VALUES.map((v, i) => anEvent({
    projectId: PROJECT, distinctId: String(i), event: 'v', properties: JSON.stringify(bagOf(v)), personProperties: JSON.stringify(bagOf(v)),
  })))
}

/** Openers of the engine's event-side stores, for their contract suites (each on a fresh database). */
export interface EventStoreOpeners {
  events: Open<EventPorts>
  deadLetters: Open<DeadLetterPorts>
}

/**
 * Registers the suite for one engine: the event-SQL cases below, then the event-side store
 * contracts on the same engine. `refuses` names plan operations the engine does not run yet: each of
 * their cases must then be refused with a 400 (`validation_error`), never a wrong answer or a 500;
 * every other case must answer as JS does.
 */
export function eventSqlConformance(name: string, open: () => Promise<EventSqlEngine>, opts: { contracts: EventStoreOpeners; refuses?: readonly CaseKey[] }): void {
  eventStoreContract(name, opts.contracts.events)
  deadLetterStoreContract(name, opts.contracts.deadLetters)

  test(`${name} event SQL: every operator of the table has a case here, and each selects what the domain matcher selects`, async (t) => {
    const engine = await open()
    t.after(() => engine.close())
    assert.deepEqual(Object.keys(ONE_PER_OPERATOR).sort(), [...EVENT_SQL_OPERATORS].sort())
    await storeValues(engine)
    for (const [operator, value] of Object.entries(ONE_PER_OPERATOR)) {
      for (const type of ['event', 'person'] as const) {
        const filter: PropertyFilter = { key: 'v', operator, value, type }
        const now = Date.now()
        const want = domainIds(filter, now).filter((i) => !isDateGap(operator, VALUES[i], now))
        const got = (await ids(engine, filter)).filter((i) => !isDateGap(operator, VALUES[i], now))
        assert.deepEqual(got, want, `${type} ${operator} ${JSON.stringify(value)}`)
      }
    }
  })

  test(`${name} event SQL: PostHog's golden property cases answer as the domain does`, async (t) => {
    const engine = await open()
    t.after(() => engine.close())
    assert.ok(GOLDEN.length > 50, `golden cases found: ${GOLDEN.length}`)
    await engine.events.insertBatch(GOLDEN.map(([, input], i) => anEvent({ projectId: PROJECT, distinctId: String(i), properties: JSON.stringify(input.properties) })))
    for (const [i, [title, input, expected]] of GOLDEN.entries()) {
      const filter = { ...input.filter, type: 'event' }
      const rows = await engine.query.run(PROJECT, {
        source: { kind: 'events' }, select: [{ alias: 'id', expr: { op: 'column', name: 'distinct_id' } }],
        where: { op: 'and', args: [{ op: 'binary', fn: '=', left: { op: 'column', name: 'distinct_id' }, right: { op: 'literal', value: String(i) } }, { op: 'property_filter', filter }] },
      }, GUARDS)
      assert.equal(rows.rows.length === 1, expected, title)
    }
  })

  test(`${name} event SQL: generated filters select what the domain matcher selects (property-based)`, async (t) => {
    const engine = await open()
    t.after(() => engine.close())
    await storeValues(engine)
    const scalar = fc.oneof(fc.constantFrom(...STORED.filter((v) => v !== null)), fc.string({ unit: fc.constantFrom('a', 'L', '%', '_', '.', '1', '2', '-', ' '), maxLength: 4 }), fc.integer({ min: -5, max: 20 }))
    const filter = fc.record({
      key: fc.constant('v'),
      operator: fc.constantFrom(...EVENT_SQL_OPERATORS),
      value: fc.oneof(scalar, fc.array(scalar, { minLength: 0, maxLength: 3 })),
      type: fc.constantFrom('event', 'person'),
    })
    await fc.assert(fc.asyncProperty(filter, async (f) => {
      const now = Date.now()
      const want = domainIds(f, now).filter((i) => !isDateGap(f.operator, VALUES[i], now))
      const got = (await ids(engine, f)).filter((i) => !isDateGap(f.operator, VALUES[i], now))
      assert.deepEqual(got, want, JSON.stringify(f))
    }), { seed: 26, numRuns: 150 })
  })

  test(`${name} event SQL: every plan operation answers as computed in JS over the fixture`, async (t) => {
    const engine = await open()
    t.after(() => engine.close())
    await engine.events.insertBatch(FIXTURE)
    for (const [op, cases] of Object.entries(PLAN_CASES) as Array<[CaseKey, PlanCase[]]>) {
      assert.ok(cases.length > 0, `${op} has a case`)
      for (const c of cases) {
        if (opts.refuses?.includes(op)) {
          await assert.rejects(engine.query.run(PROJECT, c.plan, GUARDS), (err) => err instanceof AppError && err.code === 'validation_error', `${op}: ${c.title} is refused with a 400`)
          continue
        }
        const rows = (await engine.query.run(PROJECT, c.plan, GUARDS)).rows
        assert.deepEqual(rows.map(normalise), c.expect.map(normalise), `${op}: ${c.title}`)
      }
    }
  })
}

/** Dates the domain reads only through JS's Date.parse are no dates in SQL (the gap listed on dateFilterSql). */
function isDateGap(operator: string, value: unknown, now: number): boolean {
  return operator.startsWith('is_date_') && isDateOnlyToDateParse(value, now)
}

/** Rows as plain JSON (numbers as numbers, lists sorted when marked unordered by the case). */
function normalise(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(row)) out[k] = typeof v === 'bigint' ? Number(v) : typeof v === 'string' && /^-?\d+$/.test(v) && k.startsWith('n_') ? Number(v) : v
  return out
}
