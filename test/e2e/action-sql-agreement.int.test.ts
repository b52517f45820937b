// The action's SQL (DuckDB) and the pure matcher (domain/actions) agree, event by event, on
// generated events and actions, and both answer PostHog's golden cases. Property values are
// scalars: the known gaps (objects, arrays read as booleans, numbers from 1e21, `İ` and final
// sigma under lower-casing) are listed on `propertyFilterSql`. For `is_date_*`, values the domain
// reads as dates only through JS's Date.parse are left out of the comparison (the gap listed on
// `dateFilterSql`; date-semver-sql-agreement.int.test.ts pins what the SQL answers for them).
// The SQL resolves relative dates at Date.now(), mocked to NOW, the matcher's clock.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import fc from 'fast-check'
import { compileAction, type ActionStepDefinition } from '../../src/domain/actions/match-action.ts'
import { elementsToString, type Element } from '../../src/domain/events/elements-to-string.ts'
import type { PropertyFilter } from '../../src/domain/properties/property-filter.ts'
import type { DuckDb } from '../../src/storage/duckdb/open-duckdb.ts'
import { actionMatchSql } from '../../src/storage/duckdb/duckdb-action-queries.ts'
import { SQL_PROPERTY_OPERATORS } from '../../src/storage/event-sql/property-filter-sql.ts'
import { parseElementsChain } from '../../src/domain/actions/parse-elements-chain.ts'
import { insertTestEvents, openTestEventsDb, type TestEventRow } from '../helpers/action-events.ts'
import { isDateOnlyToDateParse } from '../helpers/date-parse-gap.ts'

const NOW = Date.parse('2026-01-01T00:00:00Z')
// Fixed seeds keep CI deterministic; ACTION_FUZZ_SEED / ACTION_FUZZ_RUNS widen a local hunt.
const SEED = process.env.ACTION_FUZZ_SEED ? Number(process.env.ACTION_FUZZ_SEED) : 7
const RUNS = process.env.ACTION_FUZZ_RUNS ? Number(process.env.ACTION_FUZZ_RUNS) : 400

// Characters chosen to hit the edges: LIKE wildcards, regex and selector metacharacters, the
// chain's own separators and quotes, non-ASCII letters whose case JS and DuckDB fold alike.
const CHARS = ['a', 'b', 'A', 'B', 'é', 'É', 'ß', '😀', '%', '_', '.', '/', '"', '\\', ';', ':', ' ', '\n', '=', '-', '#', '>', '[', ']', "'", '1', '0', '(', ')', '*', '+', '?', '$', '^', '|', '~']
const text = fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 8 })
const EVENTS = ['$autocapture', '$pageview', 'signup', 'Signup', '$rageclick']
const TAGS = ['a', 'button', 'div', 'span', 'h1', 'main', 'body']
const CLASSES = ['btn', 'primary', 'top', 'x:y', 'md\\:flex', 'a"b', 'Btn']
const URLS = ['https://www.pets.com/cats/fluffy', 'https://www.PETS.com/cats/fluffy', 'https://pets.com/(cats)', 'http://a.com/a_b?x=1%20y', 'aaaa', '']
const SCALARS = ['5', ' 5', '1e3', 'inf', '-Infinity', 'nan', 'true', 'TRUE', 'False', '10.5', '-0', '1_0', '.5', '5.', 'Pro', 'pro', 'null', '']
// Dates in each shape the domain parses (and impossible ones), Unix seconds, relative dates; versions.
const DATES = ['2025-12-25', '2026-01-01', '2024-02-29', '2023-02-29', '2025-12-31T23:59:59Z', '2026-01-01T01:00:00+02:00', '2025-12-31 22:00:00',
  '2025-12-31T23:00:00.500', '2025-12-31t23:59:59.9996z', '1767225600', '1767225600.5', '-7d', '-1h', '-2w', '-1m', '-1y', '-10000d', 'May 6, 2024']
const VERSIONS = ['1.2.3', '1.2', 'v1.2.3', '1.2.3-beta', '1.2.3-beta.2', '1.2.3+build', '1.3.0', '2.0.0', '0.2.3', '01.2.3', '1.2.3.4', 'v', '1.*', '*']
const KEYS = ['$current_url', 'plan', 'n', 'b', 'a/b', 'x~y', 'wé', 'q', '', '~1', '"']

const scalar = fc.oneof(
  text,
  fc.constantFrom(...SCALARS, ...URLS),
  fc.constantFrom(...DATES, ...VERSIONS),
  fc.integer({ min: -20, max: 20 }),
  fc.integer({ min: 1_767_000_000, max: 1_767_300_000 }),
  fc.integer({ min: -2000, max: 2000 }).map((n) => n / 100),
  fc.boolean(),
  fc.constant(null),
)
const bag = fc.dictionary(fc.constantFrom(...KEYS), scalar, { maxKeys: 4 })

const element: fc.Arbitrary<Element> = fc.record(
  {
    tag_name: fc.constantFrom(...TAGS, 'A', ''),
    attr_class: fc.array(fc.constantFrom(...CLASSES), { maxLength: 3 }),
    text: fc.oneof(text, fc.constantFrom('Sign up', 'Go', 'GO', 'aaaa')),
    href: fc.oneof(text, fc.constantFrom('/x', '/X', '/signup?x=1', 'https://a.com/b')),
    attr_id: fc.constantFrom('go', 'nested', 'Go'),
    nth_child: fc.integer({ min: 0, max: 4 }),
    nth_of_type: fc.integer({ min: 0, max: 4 }),
    attributes: fc.dictionary(fc.constantFrom('attr__data-attr', 'attr__class', 'attr__role', 'prop'), fc.oneof(text, fc.constantFrom('cta', 'x'))),
  },
  { requiredKeys: [] },
)
// Mostly well-formed chains, sometimes raw text, so both parsers see malformed input too.
const chain = fc.oneof(
  { weight: 6, arbitrary: fc.array(element, { maxLength: 5 }).map(elementsToString) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...CHARS, 'text', 'href', 'nth-child'), maxLength: 30 }) },
)
const eventRow: fc.Arbitrary<TestEventRow> = fc.record({
  event: fc.constantFrom(...EVENTS),
  properties: fc.oneof(bag, bag.map((b) => ({ ...b, $current_url: b.$current_url ?? URLS[0] }))),
  elementsChain: chain,
  personProperties: fc.option(bag, { nil: null }),
})

const PATTERNS = ['pets.com', '%.com/c_ts', '^https?://', '^(a+)+$', '(', '(?P<n>a)', '(?<n>a)', 'a(?=b)', '\\d', 'é', 'ß|B']
const SELECTORS = ['a', 'div a', 'div > a', '.btn', 'a.btn.primary', '[data-attr="cta"]', "[data-attr='x']", '#go', 'div > * > a',
  'button:nth-child(2)', 'body div > a.btn', '[href="/x"]', '  ', 'a:hover', '.md\\:flex', 'main > div > span', '.x:y', 'h1 > a', '[id="go"]']
const matching = fc.constantFrom('exact', 'contains', 'regex', 'startswith')
const pattern = fc.oneof(text, fc.constantFrom(...PATTERNS, ...URLS))
const wellFormedFilter: fc.Arbitrary<PropertyFilter> = fc.record({
  type: fc.constantFrom('event', 'person', 'element', 'cohort', 'group', undefined),
  key: fc.constantFrom(...KEYS, 'tag_name', 'text', 'href', 'attr_id', 'nth_child', 'nth_of_type', 'selector', 'color'),
  operator: fc.constantFrom(...SQL_PROPERTY_OPERATORS, 'in', null, undefined),
  value: fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.constantFrom(...PATTERNS, ...SELECTORS, 'all'), fc.constantFrom(...DATES, ...VERSIONS)),
}, { requiredKeys: ['key'] })
// Stored filters come from users: now and then one that is not a filter at all.
const filter = fc.oneof(
  { weight: 30, arbitrary: wellFormedFilter },
  { weight: 1, arbitrary: fc.constantFrom(null, 'x', { value: 1 }, { key: 5 }) as unknown as fc.Arbitrary<PropertyFilter> },
)
// One or two constraints per step, so that generated actions match some events often.
const constraint: fc.Arbitrary<ActionStepDefinition> = fc.oneof(
  fc.record({ event: fc.constantFrom(...EVENTS) }),
  fc.record({ url: pattern, url_matching: fc.option(matching, { nil: null }) }),
  fc.record({ text: fc.oneof(pattern, fc.constantFrom('Go', 'go', 'Sign up', 'a%', '_o')), text_matching: fc.option(matching, { nil: null }) }),
  fc.record({ href: fc.oneof(pattern, fc.constantFrom('/x', '/X', '%signup%', '^/')), href_matching: fc.option(matching, { nil: null }) }),
  fc.record({ tag_name: fc.constantFrom(...TAGS) }),
  fc.record({ selector: fc.constantFrom(...SELECTORS) }),
  fc.record({ properties: fc.array(filter, { minLength: 1, maxLength: 2 }) }),
)
const step: fc.Arbitrary<ActionStepDefinition> = fc.array(constraint, { minLength: 1, maxLength: 2 }).map((parts) => Object.assign({}, ...parts) as ActionStepDefinition)
const action = fc.array(step, { minLength: 1, maxLength: 3 })

/** The uuids the SQL selects and the ones the pure matcher accepts, over the same stored rows. */
async function bothSides(db: DuckDb, rows: readonly TestEventRow[], uuids: readonly string[], steps: ActionStepDefinition[]) {
  const { sql, values } = actionMatchSql(1, steps, {}, 'uuid::VARCHAR AS uuid')
  const gap = new Set(JSON.stringify(steps).includes('"is_date_') ? uuids.filter((_, i) => isInDateParseGap(rows[i]!)) : [])
  const fromSql = new Set((await db.connection.runAndReadAll(sql, values)).getRowObjects().map((r) => String(r.uuid)).filter((u) => !gap.has(u)))
  const match = compileAction(steps)
  const pure = new Set(
    rows
      .map((row, i) => ({ row, uuid: uuids[i] }))
      .filter(({ row, uuid }) => !gap.has(uuid!) && match(asStored(row), NOW))
      .map(({ uuid }) => uuid),
  )
  return { fromSql, pure }
}

/** A value a filter can read from the row (a property, a person property, an element's field) is in the Date.parse gap. */
function isInDateParseGap(row: TestEventRow): boolean {
  const elements = parseElementsChain(row.elementsChain ?? '')
  const texts = [...Object.values(row.properties), ...Object.values(row.personProperties ?? {}),
    ...elements.flatMap((e) => [e.tag_name, e.text, e.href, e.attr_id])]
  return texts.some((v) => isDateOnlyToDateParse(v, NOW))
}

/** What the matcher sees of a stored row: properties read back from their JSON text. */
function asStored(row: TestEventRow) {
  return {
    event: row.event,
    properties: JSON.parse(JSON.stringify(row.properties)) as Record<string, unknown>,
    elementsChain: row.elementsChain ?? '',
    personProperties: row.personProperties ? (JSON.parse(JSON.stringify(row.personProperties)) as Record<string, unknown>) : null,
  }
}

function describeDifference(rows: readonly TestEventRow[], uuids: readonly string[], a: Set<string>, b: Set<string>): string {
  const differing = uuids.flatMap((u, i) => (a.has(u) !== b.has(u) ? [{ sql: a.has(u), pure: b.has(u), row: rows[i] }] : []))
  return JSON.stringify(differing.slice(0, 3), null, 1)
}

test('the SQL and the pure matcher select the same events for generated actions', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: NOW })
  const db = await openTestEventsDb()
  t.after(() => db.close())
  const rows = fc.sample(eventRow, { numRuns: 400, seed: SEED + 20261122 })
  const uuids = await insertTestEvents(db, rows)
  let matchedSomething = 0
  await fc.assert(
    fc.asyncProperty(action, async (steps) => {
      const { fromSql, pure } = await bothSides(db, rows, uuids, steps)
      if (pure.size > 0 && pure.size < rows.length) matchedSomething++
      assert.deepEqual([...fromSql].sort(), [...pure].sort(), describeDifference(rows, uuids, fromSql, pure))
    }),
    { numRuns: RUNS, seed: SEED },
  )
  // The generators must produce actions that match something, or agreement proves little.
  console.log(`generated actions selecting some but not all events: ${matchedSomething}`)
  assert.ok(matchedSomething > RUNS / 4, `only ${matchedSomething} generated actions matched some but not all events`)
})

test('the SQL and the pure matcher agree on generated events for handwritten actions', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: NOW })
  const db = await openTestEventsDb()
  t.after(() => db.close())
  const actions: ActionStepDefinition[][] = [
    [{ event: '$autocapture', selector: 'div > a' }, { url: 'pets.com' }],
    [{ text: 'Go', tag_name: 'a' }],
    [{ href: '/x', href_matching: 'contains', selector: '.btn' }],
    [{ properties: [{ key: 'n', operator: 'gt', value: 1, type: 'event' }, { key: 'plan', operator: 'icontains', value: 'R', type: 'person' }] }],
    [{ properties: [{ key: 'nth_child', operator: 'lte', value: 2, type: 'element' }] }],
    [{ properties: [{ key: 'b', value: true, type: 'event' }] }, { properties: [{ key: 'b', value: ['true', 'False'], operator: 'is_not' }] }],
    [{ properties: [{ key: 'n', operator: 'is_date_after', value: '-2w', type: 'event' }] }, { properties: [{ key: 'q', operator: 'is_date_before', value: '2026-01-01', type: 'person' }] }],
    [{ properties: [{ key: 'plan', operator: 'is_date_exact', value: '2025-12-31T23:59:59Z', type: 'event' }] }],
    [{ properties: [{ key: 'n', operator: 'semver_gte', value: '1.2.3', type: 'event' }, { key: 'q', operator: 'semver_caret', value: '0.2', type: 'person' }] }],
    [{ properties: [{ key: 'b', operator: 'semver_tilde', value: 'v1.2.3-beta', type: 'event' }] }, { properties: [{ key: 'plan', operator: 'semver_wildcard', value: '1.*' }] }],
  ]
  await fc.assert(
    fc.asyncProperty(fc.array(eventRow, { minLength: 1, maxLength: 30 }), async (rows) => {
      await db.connection.run('DELETE FROM events')
      const uuids = await insertTestEvents(db, rows)
      for (const steps of actions) {
        const { fromSql, pure } = await bothSides(db, rows, uuids, steps)
        assert.deepEqual([...fromSql].sort(), [...pure].sort(), `${JSON.stringify(steps)}: ${describeDifference(rows, uuids, fromSql, pure)}`)
      }
    }),
    { numRuns: Math.ceil(RUNS / 7), seed: SEED + 4 },
  )
})

type GoldenEvent = { event: string; properties: Record<string, unknown>; elements?: Element[]; person_properties?: Record<string, unknown> }
type ActionCase = [string, { steps: ActionStepDefinition[]; event: GoldenEvent }, { matches: boolean }]
type SelectorCase = [string, { elements: Element[]; selector: string }, { matches: boolean }]
const golden = <T,>(name: string): T[] => JSON.parse(readFileSync(new URL(`../golden/${name}`, import.meta.url), 'utf8')) as T[]

test('the SQL answers every golden action case', async (t) => {
  const db = await openTestEventsDb()
  t.after(() => db.close())
  const cases = golden<ActionCase>('action-steps.json')
  const rows = cases.map(([, { event }], i) => ({
    projectId: 1000 + i,
    event: event.event,
    properties: event.properties,
    elementsChain: elementsToString(event.elements ?? []),
    personProperties: event.person_properties ?? null,
  }))
  await insertTestEvents(db, rows)
  for (const [i, [name, input, expected]] of cases.entries()) {
    const { sql, values } = actionMatchSql(1000 + i, input.steps, {}, 'count(*) AS n')
    const n = Number((await db.connection.runAndReadAll(sql, values)).getRowObjects()[0].n)
    assert.equal(n === 1, expected.matches, name)
  }
})

test('the SQL answers every golden selector case', async (t) => {
  const db = await openTestEventsDb()
  t.after(() => db.close())
  const cases = golden<SelectorCase>('action-selectors.json')
  await insertTestEvents(db, cases.map(([, { elements }], i) => ({ projectId: 1000 + i, event: '$autocapture', properties: {}, elementsChain: elementsToString(elements) })))
  for (const [i, [name, input, expected]] of cases.entries()) {
    const { sql, values } = actionMatchSql(1000 + i, [{ selector: input.selector }], {}, 'count(*) AS n')
    const n = Number((await db.connection.runAndReadAll(sql, values)).getRowObjects()[0].n)
    assert.equal(n === 1, expected.matches, name)
  }
})
