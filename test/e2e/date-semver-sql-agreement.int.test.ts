// `is_date_*` and `semver_*` in SQL (DuckDB for events, PGlite and PostgreSQL for persons) answer as
// the domain matcher (domain/properties/match-property.ts) does, over every pair of a table of
// filters and a table of stored values: each accepted date shape, Unix seconds, relative dates,
// impossible calendar dates, versions with and without `v`, pre-releases and build metadata,
// garbage, JSON non-strings and a missing key. The one documented gap: a string the domain reads as a
// date only through JS's Date.parse (V8 reads "1.2.3" as 2003-01-02) is no date to the SQL, and
// that is what is expected of it here (see `dateFilterSql`).
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { matchProperty } from '../../src/domain/properties/match-property.ts'
import type { PropertyFilter } from '../../src/domain/properties/property-filter.ts'
import { duckDbEventDialect as d } from '../../src/storage/duckdb/duckdb-event-dialect.ts'
import { propertyFilterSql } from '../../src/storage/event-sql/property-filter-sql.ts'
import { pgParams, propertyFilterSql as pgFilterSql } from '../../src/storage/sql/sql-property-filter.ts'
import { insertTestEvents, openTestEventsDb } from '../helpers/action-events.ts'
import { isDateOnlyToDateParse } from '../helpers/date-parse-gap.ts'
import { createTestDatabase, TEST_POSTGRES_URL } from '../helpers/test-postgres.ts'

// 2026-03-31T10:20:30.456Z: month-end, so `-1m` clamps to February's last day.
const NOW = Date.parse('2026-03-31T10:20:30.456Z')
const MISSING = Symbol('missing')

const DATE_VALUES: unknown[] = [
  '2024-05-06', '2024-05-05', '2024-05-07', '2024-02-29', '2023-02-29', '2024-02-30', '2024-13-01', '0099-01-01', '0100-01-01',
  '2024-05-06T00:00:00Z', '2024-05-06T10:00:00Z', '2024-05-06t10:00:00z', '2024-05-06 10:00:00+02:00', '2024-05-06T10:00:00-05:30',
  '2024-05-06T10:00:00.5Z', '2024-05-06T10:00:00.123456789Z', '2024-05-06T10:00:59.9996Z', '2024-05-06T10:00:58.9996Z',
  '2024-05-06T24:00:00Z', '2024-05-06T10:60:00Z', '2024-05-06T10:00:60Z', '2024-05-06T10:00', '2024-05-06 10:00:00', '2024-05-06T10:00:00.250',
  '2024-05-06t10:00', '1714989600', '1714989600.5', 1714989600, 1714989600.25, 0, -86400, '1714989600000', '1e9', '-0', 'inf', 'nan', '1e400',
  '-7d', '7d', '-0d', '-1h', '-2w', '-1m', '-13m', '-1y', '-9999d', '-10000d', '-00007d', '-1x', 'x-1d',
  '', 'garbage', 'null', 'true', true, false, null, { at: '2024-05-06' }, ['2024-05-06'],
]
const VERSION_VALUES: unknown[] = [
  '1.2.3', '1.2', '1', 'v1.2.3', 'V1.2.3', ' 1.2.3 ', 'v 1.2.3', '01.002.3', '1.2.3.4', '1..3', '1.2.3-beta', '1.2.3-beta.2', '1.2.3-beta.11',
  '1.2.3-alpha', '1.2.3-0', '1.2.3-01', '1.2.3-rc.1+build.5', '1.2.3+build', '1.2.3+build.01', '1.2.3+build.1', '1.2.3-', '1.2.3+', '1.3.0', '1.3.0-beta',
  '2.0.0', '2.0.0-rc.1', '0.2.3', '0.2.9', '0.3.0', '0.0.3', '0.0.4', '10.0.0', '9007199254740991.0.0', '9007199254740992.0.0', 1.5, 2, 'one.two', 'x',
]
const FILTERS: PropertyFilter[] = [
  ...['is_date_before', 'is_date_after', 'is_date_exact'].flatMap((operator) =>
    ['2024-05-06', '2024-05-06T10:00:00Z', '2024-05-06T12:00:00+02:00', '2024-05-06 10:00:00.5', '1714989600', '-7d', '-1h', '-2w', '-1m', '-1y', '-1m-', 'nope', 5]
      .map((value) => ({ key: 'v', operator, value }))),
  ...['semver_eq', 'semver_neq', 'semver_gt', 'semver_gte', 'semver_lt', 'semver_lte', 'semver_tilde', 'semver_caret'].flatMap((operator) =>
    ['1.2.3', 'v1.2', '1.2.3-beta.2', '1.2.3+build.1', '0.2.3', '0.0.3', '1.x', 'nope'].map((value) => ({ key: 'v', operator, value }))),
  ...['1.*', '1.2.*', '*', '1.2', '0.2', '1.2.3', 'x.1', '1.*.3'].map((value) => ({ key: 'v', operator: 'semver_wildcard', value })),
  { key: 'v', operator: 'semver_gte', value: null },
]
const VALUES = [...DATE_VALUES, ...VERSION_VALUES, MISSING]
const bagOf = (v: unknown): Record<string, unknown> => (v === MISSING ? { other: 1 } : { v })

/** The indexes of VALUES the domain accepts for the filter, at NOW (less the Date.parse gap). */
function domainAnswer(filter: PropertyFilter): number[] {
  const isDate = String(filter.operator).startsWith('is_date_')
  return VALUES.flatMap((v, i) => {
    if (isDate && isDateOnlyToDateParse(v, NOW)) return []
    return matchProperty(filter, JSON.parse(JSON.stringify(bagOf(v))), NOW) ? [i] : []
  })
}

function describe(filter: PropertyFilter, got: number[], want: number[]): string {
  const show = (ids: number[]) => ids.map((i) => (VALUES[i] === MISSING ? '<missing>' : JSON.stringify(VALUES[i])))
  return `${JSON.stringify(filter)}: SQL only ${show(got.filter((i) => !want.includes(i)))}, domain only ${show(want.filter((i) => !got.includes(i)))}`
}

test('DuckDB selects the same stored values as the domain for every date and version filter', async (t) => {
  const db = await openTestEventsDb()
  t.after(() => db.close())
  await insertTestEvents(db, VALUES.map((v, i) => ({ event: 'e', distinctId: String(i), properties: bagOf(v) })))
  let matched = 0
  for (const filter of FILTERS) {
    const params = d.createParams()
    const where = propertyFilterSql(filter, d.propertyValue('event', filter.key, params), d, params, NOW)
    const rows = (await db.connection.runAndReadAll(`SELECT distinct_id FROM events WHERE ${where}`, params.values)).getRowObjects()
    const got = rows.map((r) => Number(r.distinct_id)).sort((a, b) => a - b)
    const want = domainAnswer(filter)
    if (want.length > 0 && want.length < VALUES.length) matched++
    assert.deepEqual(got, want, describe(filter, got, want))
  }
  // Unparsable filters (`nope`, `-1m-`, `x.1`...) rightly match nothing; the rest must discriminate.
  assert.ok(matched > FILTERS.length * 0.7, `only ${matched} filters matched some but not all values`)
})

/** A PostgreSQL-like database with the table of persons' properties (jsonb), and a query function. */
type Query = (sql: string, values: unknown[]) => Promise<Array<Record<string, unknown>>>

async function checkPostgres(query: Query): Promise<void> {
  await query('CREATE TABLE props (id integer, properties jsonb)', [])
  for (const [i, v] of VALUES.entries()) await query('INSERT INTO props VALUES ($1, $2::jsonb)', [i, JSON.stringify(bagOf(v))])
  for (const filter of FILTERS) {
    const params = pgParams()
    const where = pgFilterSql('p.properties', filter, params, NOW)
    const got = (await query(`SELECT id FROM props p WHERE ${where} ORDER BY id`, params.values)).map((r) => Number(r.id))
    const want = domainAnswer(filter)
    assert.deepEqual(got, want, describe(filter, got, want))
  }
}

test('PGlite selects the same stored values as the domain for every date and version filter', async (t) => {
  const db = new PGlite()
  t.after(() => db.close())
  await checkPostgres(async (sql, values) => (await db.query<Record<string, unknown>>(sql, values)).rows)
})

test('PostgreSQL selects the same stored values as the domain for every date and version filter', { skip: !TEST_POSTGRES_URL }, async (t: TestContext) => {
  const client = new pg.Client({ connectionString: await createTestDatabase(t) })
  await client.connect()
  try {
    await checkPostgres(async (sql, values) => (await client.query(sql, values)).rows)
  } finally {
    await client.end() // before the database is dropped (t.after)
  }
})

// Shapes the domain hands to JS's Date.parse (V8's legacy parser); the SQL has no such parser.
const DATE_PARSE_ONLY = ['May 6, 2024', 'Mon, 06 May 2024 10:00:00 GMT', '2024/05/06', '2024-05-06T10:00Z', '1.2.3', ' 5']

test('dates the domain reads only through Date.parse are no dates in SQL (the documented gap)', async (t) => {
  const db = await openTestEventsDb()
  t.after(() => db.close())
  await insertTestEvents(db, DATE_PARSE_ONLY.map((v, i) => ({ event: 'e', distinctId: String(i), properties: { v } })))
  const filter = { key: 'v', operator: 'is_date_after', value: '1990-01-01' }
  assert.deepEqual(DATE_PARSE_ONLY.filter((v) => !matchProperty(filter, { v }, NOW)), [], 'each is a date to the domain')
  const params = d.createParams()
  const where = propertyFilterSql(filter, d.propertyValue('event', 'v', params), d, params, NOW)
  const rows = (await db.connection.runAndReadAll(`SELECT count(*) AS n FROM events WHERE ${where}`, params.values)).getRowObjects()
  assert.equal(Number(rows[0]!.n), 0)
})
