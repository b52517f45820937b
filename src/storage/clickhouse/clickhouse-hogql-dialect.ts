import type { IntervalUnit } from '../../domain/hogql/hogql-ast.ts'
import { hogqlError } from '../../domain/hogql/hogql-error.ts'
import type { HogQLDialect } from '../event-sql/hogql/hogql-dialect.ts'
import type { ExprScope, Typed } from '../event-sql/hogql/hogql-sql-types.ts'
import { MATERIALIZED_COLUMNS, materializedColumn } from '../duckdb/materialized-properties.ts'
import { clickHouseCode, clickHouseMessage } from './clickhouse-errors.ts'
import { clickHouseEventDialect, createLiteralParams } from './clickhouse-event-dialect.ts'
import { CLICKHOUSE_HOGQL_FUNCTIONS } from './clickhouse-hogql-functions.ts'
import { stringLiteral } from './clickhouse-literals.ts'
import { currentOverridesSql } from './clickhouse-person-override-store.ts'

const INT64_MAX = 2n ** 63n - 1n
const UINT64_MAX = 2n ** 64n - 1n
const UNIT_FN: Record<IntervalUnit, string> = {
  second: 'Seconds', minute: 'Minutes', hour: 'Hours', day: 'Days', week: 'Weeks', month: 'Months', quarter: 'Quarters', year: 'Years',
}
const INTERVAL_TYPE: Record<IntervalUnit, string> = {
  second: 'Second', minute: 'Minute', hour: 'Hour', day: 'Day', week: 'Week', month: 'Month', quarter: 'Quarter', year: 'Year',
}

/**
 * Errors ClickHouse gives for a statement it refuses (syntax, unknown names, types, an aggregate
 * inside an aggregate, a column neither grouped nor aggregated, a JOIN it cannot run, a write under
 * `readonly = 2`): the query's fault. Codes from ClickHouse's ErrorCodes.cpp, the same on 18.16 and
 * current releases.
 */
const REFUSED = new Set(['1', '6', '27', '32', '36', '38', '41', '42', '43', '44', '46', '47', '48', '53', '62', '69', '70', '72', '164', '169', '179', '184', '190', '215', '386', '403'])

export const clickHouseStatementRefused = (err: unknown): boolean => REFUSED.has(clickHouseCode(err))

const tzOf = (scope: ExprScope) => stringLiteral(scope.timeZone)
/** A DateTime in the project's zone (or any) as a DateTime('UTC'): every instant leaves as UTC text the engine reads back exactly. */
export const inUtc = (sql: string) => `toTimeZone(${sql}, 'UTC')`
const num = (t: Typed): string => (t.type === 'number' || t.type === 'null' || t.type === 'bool' ? t.sql : `toFloat64OrNull(toString(${t.sql}))`)

function arrays(alias: string, bag: 'properties' | 'person_properties') {
  const p = bag === 'properties' ? `${alias}.prop` : `${alias}.person_prop`
  return { keys: `${p}_keys`, values: `${p}_values`, nulls: `${p}_null_keys` }
}

function topLevelKey(keys: readonly string[]): string {
  if (keys.length !== 1) {
    throw hogqlError(`Nested property keys ("${keys.join('.')}") are not supported on ClickHouse yet: read the top-level key and filter on it.`)
  }
  return keys[0]!
}

const EVENT_COLUMNS = [
  'uuid', 'event', 'distinct_id', 'properties', 'elements_chain', 'timestamp', 'created_at', 'person_properties', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4',
  'prop_keys', 'prop_values', 'prop_null_keys', 'person_prop_keys', 'person_prop_values', 'person_prop_null_keys',
  ...MATERIALIZED_COLUMNS,
]

/**
 * HogQL on ClickHouse, written to the SQL that runs on 18.16 and current releases (docs/clickhouse.md):
 * values as escaped literals (no query parameters on 18.16), GROUP BY / ORDER BY by alias (18.16 reads
 * `ORDER BY 1` as a constant), `ALL` joins written out, properties from the event store's top-level
 * key/value arrays or materialized columns, instants as `DateTime('UTC')` (seconds: 18.16 has no
 * DateTime64), the project's zone passed to each date function. The functions are ClickHouse's own,
 * as PostHog prints them (`clickhouse-hogql-functions.ts`).
 */
export const clickHouseHogQLDialect: HogQLDialect = {
  createParams: createLiteralParams,
  constant(value, params, digits) {
    if (digits !== undefined) {
      const n = BigInt(digits)
      const abs = n < 0n ? -n : n
      const fn = abs <= INT64_MAX ? 'toInt64' : n > 0n && n <= UINT64_MAX ? 'toUInt64' : 'toFloat64'
      return { sql: `${fn}(${stringLiteral(digits)})`, type: 'number' }
    }
    if (typeof value === 'boolean') return { sql: params.add(value), type: 'bool' }
    if (typeof value === 'number') return { sql: params.add(value), type: 'number' }
    return { sql: params.add(value), type: 'string', text: value }
  },
  bool: (value) => (value ? '1' : '0'),
  quote: (name) => `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``,
  selectedRef: (_position, alias) => alias,
  toNumber: num,
  toText(t, scope) {
    if (t.type === 'string' || t.type === 'json' || t.type === 'null') return t.sql
    if (t.type === 'datetime') return `toString(toTimeZone(${t.sql}, ${tzOf(scope)}))`
    return `toString(${t.sql})`
  },
  toDateTime(t, scope) {
    if (t.type === 'datetime' || t.type === 'null') return t.sql
    if (t.type === 'date') return inUtc(`toDateTime(${t.sql}, ${tzOf(scope)})`)
    if (t.type === 'number') return `toDateTime(${t.sql}, 'UTC')`
    // A wall-clock time of the project's zone unless the text carries its own offset.
    return inUtc(`parseDateTimeBestEffortOrNull(toString(${t.sql}), ${tzOf(scope)})`)
  },
  toDate(t, scope) {
    if (t.type === 'date' || t.type === 'null') return t.sql
    if (t.type === 'datetime') return `toDate(${t.sql}, ${tzOf(scope)})`
    return `toDateOrNull(toString(${t.sql}))`
  },
  toBool(t) {
    if (t.type === 'bool') return t.sql
    const s = `lower(toString(${t.sql}))`
    return `multiIf(${s} IN ('true', 't', '1', 'yes', 'y', 'on'), 1, ${s} IN ('false', 'f', '0', 'no', 'n', 'off'), 0, NULL)`
  },
  interval(unit, n) {
    const count = `toInt64(${num(n)})`
    const calendar = unit !== 'second' && unit !== 'minute' && unit !== 'hour'
    return { sql: `toInterval${INTERVAL_TYPE[unit]}(${count})`, type: 'interval', calendar, interval: { unit, n: count } }
  },
  addInterval(time, op, interval, scope) {
    const { unit, n } = interval.interval!
    const fn = `${op === '+' ? 'add' : 'subtract'}${UNIT_FN[unit as IntervalUnit]}`
    if (time.type === 'date') {
      // A date moves by calendar units as a date; by hours or less it moves as a time, then reads as a date again.
      return interval.calendar ? { sql: `${fn}(${time.sql}, ${n})`, type: 'date' } : { sql: `toDate(${fn}(toDateTime(${time.sql}, ${tzOf(scope)}), ${n}), ${tzOf(scope)})`, type: 'date' }
    }
    const base = this.toDateTime(time, scope)
    if (!interval.calendar) return { sql: `${fn}(${base}, ${n})`, type: 'datetime' }
    // Days and longer move on the project's wall clock (a day is 23 hours across a spring change).
    return { sql: inUtc(`${fn}(toTimeZone(${base}, ${tzOf(scope)}), ${n})`), type: 'datetime' }
  },
  secondsBetween: (left, right) => `(toInt64(toUnixTimestamp(${left})) - toInt64(toUnixTimestamp(${right})))`,
  like(left, op, right) {
    // No ILIKE on 18.16: both sides lowered.
    const [l, r] = op.includes('ilike') ? [`lowerUTF8(${left})`, `lowerUTF8(${right})`] : [left, right]
    return `(${l} ${op.startsWith('not') ? 'NOT LIKE' : 'LIKE'} ${r})`
  },
  concat: (texts) => `concat(${texts.join(', ')})`,
  eventsRelation(alias, projectId, _params, needs) {
    const project = `project_id = ${Math.trunc(projectId)}`
    if (!needs.person) return `(SELECT ${EVENT_COLUMNS.join(', ')} FROM events WHERE ${project}) AS ${alias}`
    const overrides = `(SELECT old_person_id AS person_id, override_person_id FROM (${currentOverridesSql(projectId)}))`
    return `(SELECT ${EVENT_COLUMNS.join(', ')}, coalesce(override_person_id, person_id) AS __person_id FROM events ANY LEFT JOIN ${overrides} USING person_id WHERE ${project}) AS ${alias}`
  },
  personsRelation(alias, projectId) {
    const overrides = `(SELECT old_person_id AS person_id, override_person_id FROM (${currentOverridesSql(projectId)}))`
    // One argMax of a tuple, so the properties and their key/value arrays come from the same event.
    const newest = `argMax(tuple(coalesce(person_properties, '{}'), person_prop_keys, person_prop_values, person_prop_null_keys), tuple(created_at_ms, timestamp_ms))`
    const grouped = `SELECT coalesce(override_person_id, person_id) AS __id, min(timestamp) AS __first, ${newest} AS __pp ` +
      `FROM events ANY LEFT JOIN ${overrides} USING person_id WHERE project_id = ${Math.trunc(projectId)} AND isNotNull(person_id) GROUP BY __id`
    return `(SELECT __id AS id, __first AS created_at, tupleElement(__pp, 1) AS person_properties, tupleElement(__pp, 2) AS person_prop_keys, ` +
      `tupleElement(__pp, 3) AS person_prop_values, tupleElement(__pp, 4) AS person_prop_null_keys FROM (${grouped})) AS ${alias}`
  },
  events: clickHouseEventDialect,
  property(alias, bag, keys) {
    const key = topLevelKey(keys)
    const column = bag === 'properties' ? materializedColumn(key, alias) : undefined
    if (column) return column
    const a = arrays(alias, bag)
    return `if(has(${a.keys}, ${stringLiteral(key)}), ${a.values}[indexOf(${a.keys}, ${stringLiteral(key)})], NULL)`
  },
  propertyPresent(alias, bag, keys) {
    const key = stringLiteral(topLevelKey(keys))
    const a = arrays(alias, bag)
    return `(has(${a.keys}, ${key}) OR has(${a.nulls}, ${key}))`
  },
  bagText: (alias, bag) => (bag === 'properties' ? `${alias}.properties` : `coalesce(${alias}.person_properties, '{}')`),
  idText: (sql) => `toString(${sql})`,
  join: (kind, relation, on) => `${kind === 'left' ? 'ALL LEFT' : 'ALL INNER'} JOIN ${relation} ON ${on}`,
  functions: CLICKHOUSE_HOGQL_FUNCTIONS,
  typeName(engineType, type, timeZone) {
    if (type === 'datetime' || /^(Nullable\()?DateTime/.test(engineType)) return `DateTime64(6, '${timeZone}')`
    if (type === 'bool' && /^(Nullable\()?U?Int8\)?$/.test(engineType)) return engineType.startsWith('Nullable') ? 'Nullable(Bool)' : 'Bool'
    return engineType
  },
  queryErrorDetail: (err) => (clickHouseStatementRefused(err) ? clickHouseMessage(err) : null),
}
