import type { IntervalUnit } from '../../domain/hogql/hogql-ast.ts'
import { lookupTable } from '../../shared/lookup-table.ts'
import type { HogQLDialect } from '../event-sql/hogql/hogql-dialect.ts'
import type { ExprScope, Typed } from '../event-sql/hogql/hogql-sql-types.ts'
import type { SqlParams } from '../event-sql/sql-params.ts'
import { duckDbEventDialect } from './duckdb-event-dialect.ts'
import { DUCKDB_HOGQL_FUNCTIONS } from './duckdb-hogql-functions.ts'

const INTERVAL_FN: Record<IntervalUnit, string> = {
  second: 'to_seconds', minute: 'to_minutes', hour: 'to_hours', day: 'to_days', week: 'to_weeks', month: 'to_months', quarter: 'to_quarters', year: 'to_years',
}
const INT64_MAX = 2n ** 63n - 1n
const INT128_MAX = 2n ** 127n - 1n

/** DuckDB's type names as the ClickHouse names PostHog's `types` carry. */
const TYPE_NAMES = lookupTable<string>({
  VARCHAR: 'String', BIGINT: 'Int64', INTEGER: 'Int32', SMALLINT: 'Int16', TINYINT: 'Int8', HUGEINT: 'Int128', UBIGINT: 'UInt64',
  DOUBLE: 'Float64', FLOAT: 'Float32', BOOLEAN: 'Bool', DATE: 'Date', UUID: 'UUID', NULL: 'Nullable(Nothing)', '"NULL"': 'Nullable(Nothing)',
})

// DuckDB's errors about the statement itself (types that do not convert, an aggregate inside an
// aggregate, a column not grouped): the client's query is wrong.
const QUERY_ERRORS = /^(Conversion|Binder|Invalid Input|Out of Range|Not implemented|Parser|Catalog) Error/

/** Bound values, one placeholder per distinct value: the same expression reads as the same SQL (GROUP BY matches SELECT). */
function createDedupedParams(): SqlParams {
  const values: (string | number | boolean)[] = []
  const seen = new Map<string, string>()
  return {
    values,
    add(value) {
      const key = `${typeof value}:${String(value)}`
      let placeholder = seen.get(key)
      if (!placeholder) {
        values.push(value)
        placeholder = `$${values.length}`
        seen.set(key, placeholder)
      }
      return placeholder
    },
  }
}

const tzOf = (scope: ExprScope) => scope.params.add(scope.timeZone)

/** A JSON pointer to a (nested) key, bound as a parameter. */
function jsonPointer(keys: readonly string[], params: SqlParams): string {
  return params.add(`/${keys.map((k) => k.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`)
}

const EVENT_COLUMNS = 'uuid, event, distinct_id, properties, elements_chain, timestamp, created_at, person_properties, group_0, group_1, group_2, group_3, group_4'

/**
 * HogQL on DuckDB: values bound as typed `$n` parameters, times as TIMESTAMPTZ read in the project's
 * zone, properties by JSON pointer, GROUP BY / ORDER BY by position; ClickHouse's semantics where
 * DuckDB's differ (the functions table, `duckdb-hogql-functions.ts`).
 */
export const duckDbHogQLDialect: HogQLDialect = {
  createParams: createDedupedParams,
  constant(value, params, digits) {
    // An integer literal past 2^53 is bound as its text and cast: BIGINT when Int64 holds it (so
    // `9223372036854775807 + 1` overflows, a 400, as Int64 arithmetic does), HUGEINT past it, DOUBLE past that.
    if (digits !== undefined) {
      const n = BigInt(digits)
      const abs = n < 0n ? -n : n
      return { sql: `${params.add(digits)}::${abs <= INT64_MAX ? 'BIGINT' : abs <= INT128_MAX ? 'HUGEINT' : 'DOUBLE'}`, type: 'number' }
    }
    if (typeof value === 'boolean') return { sql: `${params.add(value)}::BOOLEAN`, type: 'bool' }
    if (typeof value === 'number') return { sql: `${params.add(value)}::${Number.isSafeInteger(value) ? 'BIGINT' : 'DOUBLE'}`, type: 'number' }
    return { sql: `${params.add(value)}::VARCHAR`, type: 'string', text: value }
  },
  bool: (value) => (value ? 'TRUE' : 'FALSE'),
  quote: (name) => `"${name.replace(/"/g, '""')}"`,
  selectedRef: (position) => String(position),
  toNumber: (t) => (t.type === 'number' || t.type === 'null' ? t.sql : t.type === 'bool' ? `CAST(${t.sql} AS INTEGER)` : `TRY_CAST(${t.sql} AS DOUBLE)`),
  toText(t, scope) {
    if (t.type === 'string' || t.type === 'json') return t.sql
    if (t.type === 'datetime') return `strftime(timezone(${tzOf(scope)}, ${t.sql}), '%Y-%m-%d %H:%M:%S')`
    return `CAST(${t.sql} AS VARCHAR)`
  },
  toDateTime(t, scope) {
    if (t.type === 'datetime' || t.type === 'null') return t.sql
    const tz = tzOf(scope)
    if (t.type === 'date') return `timezone(${tz}, CAST(${t.sql} AS TIMESTAMP))`
    if (t.type === 'number') return `to_timestamp(${t.sql})`
    if (t.text !== undefined && /(?:Z|[+-]\d\d:?\d\d)$/i.test(t.text.trim())) return `CAST(${t.sql} AS TIMESTAMPTZ)`
    return `timezone(${tz}, TRY_CAST(${t.sql} AS TIMESTAMP))`
  },
  toDate(t, scope) {
    if (t.type === 'date' || t.type === 'null') return t.sql
    if (t.type === 'datetime') return `CAST(timezone(${tzOf(scope)}, ${t.sql}) AS DATE)`
    return `TRY_CAST(${t.sql} AS DATE)`
  },
  toBool: (t) => (t.type === 'bool' ? t.sql : `TRY_CAST(${t.sql} AS BOOLEAN)`),
  interval(unit, n) {
    const cast = unit === 'second' ? 'DOUBLE' : 'INTEGER'
    const calendar = unit !== 'second' && unit !== 'minute' && unit !== 'hour'
    return { sql: `${INTERVAL_FN[unit]}(CAST(${this.toNumber(n)} AS ${cast}))`, type: 'interval', calendar }
  },
  addInterval(time, op, interval, scope) {
    const base = time.type === 'date' ? time.sql : this.toDateTime(time, scope)
    if (time.type === 'date') return { sql: `CAST((${base} ${op} ${interval.sql}) AS DATE)`, type: 'date' }
    if (!interval.calendar) return { sql: `(${base} ${op} ${interval.sql})`, type: 'datetime' }
    // Days and longer move on the project's wall clock (a day is 23 hours across a spring change), as ClickHouse does.
    const tz = tzOf(scope)
    return { sql: `timezone(${tz}, (timezone(${tz}, ${base}) ${op} ${interval.sql}))`, type: 'datetime' }
  },
  secondsBetween: (left, right) => `(epoch(${left}) - epoch(${right}))`,
  like: (left, op, right) => `(${left} ${op.toUpperCase()} ${right})`,
  // `||` keeps ClickHouse's NULL in, NULL out (DuckDB's concat() skips NULLs).
  concat: (texts) => `(${texts.join(' || ')})`,
  eventsRelation(alias, projectId, params, needs) {
    const project = `${params.add(projectId)}::INTEGER`
    if (!needs.person) return `(SELECT ${EVENT_COLUMNS} FROM events WHERE project_id = ${project}) AS ${alias}`
    const evCols = EVENT_COLUMNS.split(', ').map((c) => `ev.${c}`).join(', ')
    return (
      `(SELECT ${evCols}, COALESCE(o.override_person_id, ev.person_id) AS __person_id FROM events ev ` +
      `LEFT JOIN person_overrides o ON o.project_id = ev.project_id AND o.old_person_id = ev.person_id ` +
      `WHERE ev.project_id = ${project}) AS ${alias}`
    )
  },
  personsRelation(alias, projectId, params) {
    return (
      `(SELECT COALESCE(o.override_person_id, ev.person_id) AS id, min(ev.timestamp) AS created_at, ` +
      `COALESCE(arg_max(ev.person_properties, row(ev.created_at, ev.timestamp)), '{}') AS person_properties FROM events ev ` +
      `LEFT JOIN person_overrides o ON o.project_id = ev.project_id AND o.old_person_id = ev.person_id ` +
      `WHERE ev.project_id = ${params.add(projectId)}::INTEGER AND ev.person_id IS NOT NULL GROUP BY 1) AS ${alias}`
    )
  },
  events: duckDbEventDialect,
  property: (alias, bag, keys, params) => `json_extract_string(${alias}.${bag}, ${jsonPointer(keys, params)})`,
  propertyPresent: (alias, bag, keys, params) => `COALESCE(json_exists(${alias}.${bag}, ${jsonPointer(keys, params)}), FALSE)`,
  bagText: (alias, bag) => (bag === 'properties' ? `${alias}.properties` : `COALESCE(${alias}.person_properties, '{}')`),
  idText: (sql) => `CAST(${sql} AS VARCHAR)`,
  join: (kind, relation, on) => `${kind === 'left' ? 'LEFT' : 'INNER'} JOIN ${relation} ON ${on}`,
  functions: DUCKDB_HOGQL_FUNCTIONS,
  typeName(engineType, _type, timeZone) {
    if (engineType.startsWith('TIMESTAMP')) return `DateTime64(6, '${timeZone}')`
    if (engineType.startsWith('DECIMAL')) return 'Float64'
    return TYPE_NAMES[engineType] ?? 'String'
  },
  queryErrorDetail(err) {
    const message = err instanceof Error ? err.message : String(err)
    return QUERY_ERRORS.test(message) ? message.split('\n')[0]! : null
  },
}
