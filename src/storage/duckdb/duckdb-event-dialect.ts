import type { ActionStepDefinition } from '../../../domain/actions/match-action.ts'
import type { PropertyFilter } from '../../../domain/properties/property-filter.ts'
import type { AggregateFn } from '../../../domain/query/query-plan.ts'
import type { Interval } from '../../../domain/query/date-range.ts'
import type { OffsetSegment } from '../../../domain/query/bucket-keys.ts'
import { AppError } from '../../../shared/errors.ts'
import { ELEMENTS_SQL, type SqlParams } from '../duckdb-action-elements-sql.ts'
import { jsonSource, propertyFilterSql } from '../duckdb-action-property-sql.ts'
import { compileActionSql, stepFilterSql } from '../duckdb-action-sql.ts'
import { jsonPointer, materializedColumn } from '../materialized-properties.ts'

/**
 * Everything about a query that depends on the SQL engine, for DuckDB. The plan compiler
 * (`compile-plan.ts`) writes the portable SELECT/FROM/WHERE shape and asks the dialect for the
 * rest; a ClickHouse dialect implements the same interface.
 */
export interface Dialect {
  /** The project's events (alias-free columns), with the effective person and parsed elements when asked. */
  eventsFrom(projectParam: string, needs: { person: boolean; elements: boolean }): string
  /** A column of the events relation (only known names). */
  eventColumn(name: string): string
  personId: string
  property(source: 'event' | 'person', key: string, params: SqlParams): string
  properties(source: 'event' | 'person'): string
  toNumber(text: string): string
  time(param: string): string
  /** The bucket key of an instant (see `domain/query/bucket-keys.ts`), from the zone's offsets over the span read. */
  bucket(interval: Interval, offsets: readonly OffsetSegment[], ts: string): string
  /** A bucket key moved by `n` intervals; `n` is SQL (a whole-number literal or an integer expression). */
  shift(interval: Interval, n: string, key: string): string
  epochMs(ts: string): string
  aggregate(fn: AggregateFn, arg: string | undefined, opts: { distinct?: boolean; quantile?: number; by?: string }): string
  toText(value: string): string
  bitFlag(index: string): string
  bitsAny(word: string, mask: string): string
  bitsShiftRight(word: string, by: string): string
  /** A property filter (event, person or element) with the shared operator semantics. */
  propertyFilter(filter: PropertyFilter, params: SqlParams): { sql: string; needsElements: boolean }
  action(steps: readonly ActionStepDefinition[], params: SqlParams): { sql: string; needsElements: boolean }
}

const EVENT_COLUMNS = new Set(['uuid', 'event', 'distinct_id', 'timestamp', 'created_at', 'elements_chain', 'properties', 'person_properties', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4'])
const quantileOk = (q: number | undefined): q is number => typeof q === 'number' && q > 0 && q < 1

export const duckDbDialect: Dialect = {
  eventsFrom(projectParam, needs) {
    const person = needs.person ? ` LEFT JOIN person_overrides o ON o.project_id = e.project_id AND o.old_person_id = e.person_id` : ''
    if (!needs.elements) return `events e${person} WHERE e.project_id = ${projectParam}::INTEGER`
    // The chain is parsed once per row of the project, in a subquery, only when a filter reads elements.
    return `(SELECT events.*, ${ELEMENTS_SQL} AS __els FROM events WHERE project_id = ${projectParam}::INTEGER) e${person} WHERE TRUE`
  },
  eventColumn(name) {
    if (!EVENT_COLUMNS.has(name)) throw new AppError('validation_error', `Unknown column "${name}".`, 'query')
    return `e.${name}`
  },
  personId: 'COALESCE(o.override_person_id, e.person_id)',
  property(source, key, params) {
    // A materialized column holds the same text (`properties` is then not read at all).
    const column = source === 'event' ? materializedColumn(key, 'e') : undefined
    return column ?? jsonSourceText(source === 'event' ? 'e.properties' : 'e.person_properties', key, params)
  },
  properties: (source) => (source === 'event' ? 'e.properties' : `COALESCE(e.person_properties, '{}')`),
  toNumber: (text) => `TRY_CAST(${text} AS DOUBLE)`,
  time: (param) => `${param}::TIMESTAMPTZ`,
  bucket(interval, offsets, ts) {
    // Integer arithmetic on epoch milliseconds: ~8x cheaper per row than ICU's zone-aware date_trunc.
    const ms = `epoch_ms(${ts})`
    const off = offsetSql(ms, offsets)
    const local = off === '0' ? ms : `(${ms} + ${off})`
    const day = `(${local} // 86400000)`
    switch (interval) {
      case 'hour':
        return off === '0' ? `(${ms} // 3600000 * 3600000)` : `(${local} // 3600000 * 3600000 - ${off})`
      case 'day':
        return `(${day} * 86400000)`
      case 'week':
        // Sunday-start weeks: day 0 (1970-01-01) was a Thursday.
        return `((${day} - ((${day} + 4) % 7)) * 86400000)`
      case 'month':
        return `epoch_ms(date_trunc('month', make_timestamp(${local} * 1000)))`
    }
  },
  shift(interval, n, key) {
    if (interval === 'month') return `epoch_ms(make_timestamp(${key} * 1000) + INTERVAL (${n}) MONTH)`
    const step = { hour: 3_600_000, day: 86_400_000, week: 604_800_000 }[interval]
    return `(${key} + (${n}) * ${step})`
  },
  epochMs: (ts) => `epoch_ms(${ts})`,
  aggregate(fn, arg, opts) {
    const a = arg ?? '*'
    switch (fn) {
      case 'count':
        return `count(${opts.distinct ? 'DISTINCT ' : ''}${a})`
      case 'uniq':
        return `count(DISTINCT ${a})`
      case 'quantile':
        if (!quantileOk(opts.quantile)) throw new Error('quantile between 0 and 1')
        return `quantile_cont(${a}, ${opts.quantile})`
      case 'any':
        return `any_value(${a})`
      case 'arg_min':
      case 'arg_max':
        if (!arg || !opts.by) throw new Error(`${fn} needs an argument and a key`)
        return `${fn}(${arg}, ${opts.by})`
      case 'list':
        return opts.by !== undefined && !opts.distinct ? `list(${a} ORDER BY ${opts.by})` : `list(${opts.distinct ? 'DISTINCT ' : ''}${a})`
      default:
        return `${fn}(${opts.distinct ? 'DISTINCT ' : ''}${a})`
    }
  },
  toText: (value) => `CAST(${value} AS VARCHAR)`,
  bitFlag: (index) => `(1::UBIGINT << CAST(${index} AS INTEGER))`,
  bitsShiftRight: (word, by) => `(CAST(${word} AS UBIGINT) >> CAST(${by} AS INTEGER))`,
  bitsAny(word, mask) {
    if (!/^\d{1,20}$/.test(mask)) throw new Error(`bit mask ${mask} is not an unsigned integer`)
    return `((${word} & ${mask}::UBIGINT) <> 0)`
  },
  propertyFilter(filter, params) {
    const type = filter.type ?? 'event'
    if (type === 'event') return { sql: propertyFilterSql(filter, jsonSource('e.properties', filter.key, params, materializedColumn(filter.key, 'e')), params), needsElements: false }
    if (type === 'person') return { sql: propertyFilterSql(filter, jsonSource(`COALESCE(e.person_properties, '{}')`, filter.key, params), params), needsElements: false }
    if (type === 'element') {
      const r = stepFilterSql(filter, params)
      return { sql: r.condition, needsElements: r.needsElements }
    }
    throw new AppError('validation_error', `Property filters of type "${type}" are not supported here.`, 'properties')
  },
  action(steps, params) {
    const r = compileActionSql(steps, params)
    // The prefilter is implied by the condition, cheap (no parsed elements), and binds parameters of its own.
    return { sql: `(${r.prefilter} AND ${r.condition})`, needsElements: r.needsElements }
  },
}

/** The zone's offset at the instant `ms` (epoch ms SQL): a constant, or a CASE over the DST changes in the span. */
function offsetSql(ms: string, offsets: readonly OffsetSegment[]): string {
  const whole = (n: number) => {
    if (!Number.isSafeInteger(n)) throw new Error(`offset segment ${n} is not an integer`)
    return String(n)
  }
  if (offsets.length === 1) return whole(offsets[0]!.offsetMs)
  const cases = offsets.slice(0, -1).map((o) => `WHEN ${ms} < ${whole(o.until!)} THEN ${whole(o.offsetMs)}`)
  return `(CASE ${cases.join(' ')} ELSE ${whole(offsets[offsets.length - 1]!.offsetMs)} END)`
}

/** A property's text, NULL when absent (breakdowns and math read it; filters use `jsonSource`). */
function jsonSourceText(column: string, key: string, params: SqlParams): string {
  return `json_extract_string(${column}, ${params.add(jsonPointer(key))})`
}
