import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseHogQL } from '../../../domain/hogql/parse-hogql.ts'
import { duckDbHogQLDialect } from '../../duckdb/duckdb-hogql-dialect.ts'
import { clickHouseHogQLDialect } from '../../clickhouse/clickhouse-hogql-dialect.ts'
import { translateHogQL } from './translate-hogql.ts'

// `FROM sessions` with bounds on `$start_timestamp` reads only the partials that can make such a
// session: the bounds, widened by two days (a session's 24 hours and a day of time zone), in the scan.
const DAY = 86_400_000
/** The statement's text and its parameters' values, where a bound may be either. */
const textOf = (t: { sql: string; values: unknown[] }) => t.sql + JSON.stringify(t.values)
const translate = (dialect: typeof duckDbHogQLDialect, text: string) =>
  translateHogQL(parseHogQL(text), dialect, { projectId: 1, timeZone: 'UTC', now: new Date('2024-07-01T00:00:00Z') })

for (const [name, dialect] of [['duckdb', duckDbHogQLDialect], ['clickhouse', clickHouseHogQLDialect]] as const) {
  test(`hogql sessions [${name}]: bounds on $start_timestamp are pushed into the partials' scan, widened`, () => {
    const from = Date.parse('2024-06-05T00:00:00Z')
    const to = Date.parse('2024-06-06T12:00:00Z')
    const both = translate(dialect, "SELECT session_id FROM sessions WHERE $start_timestamp >= '2024-06-05' AND toDateTime('2024-06-06 12:00:00') > $start_timestamp AND $pageview_count > 0")
    assert.ok(textOf(both).includes(String(from - 2 * DAY)), both.sql)
    assert.ok(textOf(both).includes(String(to + 2 * DAY)), both.sql)
    // The WHERE still applies to the merged sessions.
    assert.match(both.sql, /WHERE/)
    // Only top-level AND terms: a bound under OR, or on another table's field, reads every partial.
    for (const q of [
      "SELECT session_id FROM sessions WHERE $start_timestamp >= '2024-06-05' OR $pageview_count > 2",
      "SELECT session_id FROM sessions WHERE $session_duration > 5",
    ]) {
      const t = translate(dialect, q)
      assert.ok(!/min_ms["`]? (>=|<)/.test(t.sql), `${q}: ${t.sql}`)
    }
  })
}
